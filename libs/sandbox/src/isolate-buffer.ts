// Injected into the isolate's SDK build wherever it names Buffer (key hashing, serdes): V8 alone has none.
export { Buffer } from 'buffer';
