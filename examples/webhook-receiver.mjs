// A webhook receiver that checks Mediaplane's signatures, with nothing but Node's own modules.
// Run: MEDIAPLANE_WEBHOOK_SECRET=whsec_... PORT=3000 node webhook-receiver.mjs
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';

const secret = process.env.MEDIAPLANE_WEBHOOK_SECRET; // GET /notifications/v1/webhook/signature-secret
const MAX_AGE_SECONDS = 5 * 60; // older requests are refused as replays

const same = (a, b) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));
const hmac = (key, text, encoding) => createHmac('sha256', key).update(text).digest(encoding);

function verified(headers, body) {
  // Standard Webhooks: a recent timestamp, and "v1,<base64 HMAC-SHA256 of id.timestamp.body>" keyed with the
  // base64-decoded secret after "whsec_". The header lists one signature per secret in use: after a rotation
  // (POST /notifications/v1/webhook/signature-secret/rotate) the old and the new secret both sign for a while, so a
  // receiver holding either one accepts the delivery and can switch at its own pace.
  const id = String(headers['webhook-id']);
  const timestamp = String(headers['webhook-timestamp']);
  if (!(Math.abs(Date.now() / 1000 - Number(timestamp)) <= MAX_AGE_SECONDS)) return false;
  const expected = `v1,${hmac(Buffer.from(secret.slice('whsec_'.length), 'base64'), `${id}.${timestamp}.${body}`, 'base64')}`;
  if (
    String(headers['webhook-signature'] ?? '')
      .split(' ')
      .some((signature) => same(signature, expected))
  )
    return true;
  // Without Standard Webhooks headers, the spec's signature alone: hex HMAC-SHA256 of the raw body, keyed with the
  // newest secret (it has no timestamp, so it cannot refuse a replay).
  return !headers['webhook-signature'] && same(hmac(secret, body, 'hex'), String(headers.x_svc_signature_v1 ?? ''));
}

createServer((req, res) => {
  let body = '';
  req.setEncoding('utf8');
  req.on('data', (chunk) => (body += chunk));
  req.on('end', () => {
    if (!verified(req.headers, body)) return res.writeHead(401).end('bad signature');
    const event = JSON.parse(body);
    console.log('verified', event.type, event.id); // the same id can come twice: handle it once
    res.writeHead(200).end('ok');
  });
}).listen(Number(process.env.PORT ?? 3000), function () {
  console.log('listening on', this.address().port);
});
