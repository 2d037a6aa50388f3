// What tools/build-pkg.mjs bundles as dist/api.cjs for node.cjs: the
// functions, and `start` to give them their module.
export * from "./api.mjs";
export { start } from "./boundary.mjs";
