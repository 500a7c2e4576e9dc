// The oldest Node.js svc runs on. Data-plane workers are threads that each listen on the data-plane
// port with SO_REUSEPORT (`reusePort`, Node 22.12+), sharing one hot tier in shared memory
// (docs/decisions.md "Data-plane workers"). `npm install` in the repository brings Node 24 as a
// development dependency, so the README's commands run on it whatever Node the machine has.

/** The floor, as `[major, minor]`. */
export const NODE_FLOOR: readonly [number, number] = [22, 12];

/** Whether `version` (`process.version`'s form, `v24.21.0`) is at or above the floor. */
export function meetsNodeFloor(version: string): boolean {
  const [major = 0, minor = 0] = version.replace(/^v/, '').split('.').map(Number);
  return major > NODE_FLOOR[0] || (major === NODE_FLOOR[0] && minor >= NODE_FLOOR[1]);
}

/** The one line a too-old Node gets, naming what to run instead. */
export function nodeFloorMessage(version: string): string {
  return (
    `svc needs Node.js ${NODE_FLOOR.join('.')} or newer, and this is ${version}. In the repository, ` +
    '`npm install` provides Node 24 as node_modules/.bin/node, which `npm start`, `npm test` and `npx svc` use.'
  );
}
