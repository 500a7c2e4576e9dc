// The cluster-kv example as a command: one node per process, commands on stdin.
//   node dist/examples/cluster-kv/main.js <name> <host:port> [seed host:port...]
// Commands: `set <key> <value>`, `get <key>`, `owner <key>`, `members`, `quit`.

import { createInterface } from 'node:readline';
import { KvNode } from './kv-node.js';

function print(line: string): void {
  process.stdout.write(`${line}\n`);
}

async function run(node: KvNode, line: string): Promise<boolean> {
  const [command, key, ...rest] = line.trim().split(/\s+/);
  switch (command) {
    case 'set':
      if (key === undefined) break;
      await node.set(key, rest.join(' '));
      print(`ok (owner ${node.ownerOf(key)})`);
      return true;
    case 'get':
      if (key === undefined) break;
      print(JSON.stringify(await node.get(key)));
      return true;
    case 'owner':
      if (key === undefined) break;
      print(node.ownerOf(key));
      return true;
    case 'members':
      for (const member of node.member.members()) print(`${member.name} ${member.address} ${member.state}`);
      return true;
    case 'quit':
      return false;
    case '':
    case undefined:
      return true;
  }
  print('commands: set <key> <value> | get <key> | owner <key> | members | quit');
  return true;
}

async function main(): Promise<void> {
  const [name, bind, ...seeds] = process.argv.slice(2);
  if (name === undefined || bind === undefined) {
    process.stderr.write('usage: main.js <name> <host:port> [seed host:port...]\n');
    process.exit(2);
  }
  const node = new KvNode({ name, bind });
  await node.start(seeds);
  print(`${name} listening on ${node.address}`);
  const lines = createInterface({ input: process.stdin, terminal: false });
  for await (const line of lines) {
    const more = await run(node, line).catch((error: unknown) => {
      print(`error: ${error instanceof Error ? error.message : String(error)}`);
      return true;
    });
    if (!more) break;
  }
  lines.close();
  await node.stop();
}

void main();
