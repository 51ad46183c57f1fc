export {};

// The server's entry point (`npm start`). It imports nothing statically: loading the server's
// modules takes seconds, and until a SIGHUP handler exists Node's default for SIGHUP is to exit,
// so a reload sent just after a (re)start would stop the server (ADR 0073). The handler is
// installed first; a SIGHUP while the rest loads is remembered and logged.
let hupWhileLoading = false;
const onEarlyHup = (): void => {
  hupWhileLoading = true;
};
process.on('SIGHUP', onEarlyHup);
const { run } = await import('./run.js');
// run installs its own handler before it returns; this one goes after, so no moment is without one.
run(hupWhileLoading);
process.off('SIGHUP', onEarlyHup);
