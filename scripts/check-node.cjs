// Weir runs on Node 20.19+ and the 22/24 LTS lines; say so early instead of failing later in a native module.
const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 20 || (major === 20 && minor < 19) || major > 24) {
  console.warn(`weir: Node ${process.versions.node} is untested; use Node 20.19+, 22 or 24.`);
}
