// The package's ES module entry, the same for Node, Deno, Bun, browsers
// and every bundler: the functions of lib/api.mjs. The WebAssembly module
// travels inside the JS (dist/wasm-host.mjs: the host module, without the
// wire filter, which only the gateway entry loads) and is compiled on the first call,
// so importing the package has no side effect and needs no asset loader.
export * from "./lib/api.mjs";
