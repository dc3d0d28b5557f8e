// Runs s3rver with Weir's bucket configured. Arguments: data directory, port, bucket.
const S3rver = require('s3rver');

const [directory, port, bucket] = process.argv.slice(2);
const server = new S3rver({
  address: '127.0.0.1',
  port: Number(port),
  directory,
  silent: true,
  configureBuckets: [{ name: bucket }],
});
server.run().then(
  () => console.log(`s3rver listening on 127.0.0.1:${port}, bucket ${bucket}`),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => server.close().finally(() => process.exit(0)));
