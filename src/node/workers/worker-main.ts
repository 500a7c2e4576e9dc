// The module a data-plane worker thread starts with: it turns on Node's compile cache for the thread
// before anything else loads (each thread compiles svc's modules for itself, about 400 ms on two cores
// the first time, half that from the cache; NODE_DISABLE_COMPILE_CACHE=1 turns it off), then runs
// the worker (worker-thread.ts).
import { enableCompileCache } from 'node:module';

enableCompileCache();
await import('./worker-thread.js');
