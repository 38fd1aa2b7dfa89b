// The container image's HEALTHCHECK: asks this process's /readyz (the database answers) and exits 0 when it says 200.
// An api (or all) process answers on PORT; a worker or live process on MEDIAPLANE_HEALTH_PORT, which it opens only
// when that is set (the image sets it). Plain Node: the slim image has no curl.
const role = process.env.MEDIAPLANE_ROLE || 'all';
const port = role === 'worker' || role === 'live' ? process.env.MEDIAPLANE_HEALTH_PORT : process.env.PORT || '8080';
if (!port) {
  console.error(`MEDIAPLANE_HEALTH_PORT is not set: a ${role} process answers no health checks`);
  process.exit(1);
}
try {
  const res = await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(4000) });
  console.log(res.status, await res.text());
  process.exit(res.status === 200 ? 0 : 1);
} catch (e) {
  console.error(`http://127.0.0.1:${port}/readyz: ${e instanceof Error ? e.message : e}`);
  process.exit(1);
}
