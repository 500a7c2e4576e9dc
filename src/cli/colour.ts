// Colour only where a person reads it: on a terminal, unless NO_COLOR (https://no-color.org) is set
// to anything but the empty string, or the terminal says it is dumb. Help piped to a pager or a file
// and output captured by scripts carry no escape codes.
import { stripVTControlCharacters } from 'node:util';

export interface OutputStream {
  isTTY?: boolean;
}

export function colourWanted(stream: OutputStream, env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  return stream.isTTY === true && env.TERM !== 'dumb';
}

/** The text as it should reach `stream`: escape codes removed where colour is not wanted. */
export function forStream(text: string, stream: OutputStream, env: NodeJS.ProcessEnv = process.env): string {
  return colourWanted(stream, env) ? text : stripVTControlCharacters(text);
}
