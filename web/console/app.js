// The console's entry: sign in, then one screen per address (`#/`, `#/assets`, `#/assets/<id>`, `#/channels`, `#/channels/<id>`, `#/streaming`, `#/streaming/<id>`, `#/drm`, `#/watermarking`, `#/settings`), each
// drawn by its module.
import { fill, h } from '/console/dom.js';
import { resume, signOut } from '/console/session.js';
import { signInScreen } from '/console/signin.js';
import { homeScreen } from '/console/home.js';
import { assetsScreen } from '/console/assets.js';
import { assetScreen } from '/console/asset.js';
import { channelsScreen } from '/console/channels.js';
import { channelScreen } from '/console/channel.js';
import { streamingScreen } from '/console/streaming.js';
import { catalogueAssetScreen } from '/console/catalogueAsset.js';
import { settingsScreen } from '/console/settings.js';
import { drmScreen } from '/console/drm.js';
import { watermarkingScreen } from '/console/watermarking.js';

const main = document.getElementById('main');
const nav = document.getElementById('nav');
const who = document.getElementById('who');
const signOutButton = document.getElementById('signout');
let session;
/** Aborted when the screen is left: its polls and requests stop. */
let leaving = new AbortController();

const ROUTES = [
  [/^#?\/?$/, () => homeScreen],
  [/^#\/assets$/, () => assetsScreen],
  [/^#\/assets\/([^/]+)$/, () => assetScreen],
  [/^#\/channels$/, () => channelsScreen],
  [/^#\/channels\/([^/]+)$/, () => channelScreen],
  [/^#\/streaming$/, () => streamingScreen],
  [/^#\/streaming\/([^/]+)$/, () => catalogueAssetScreen],
  [/^#\/drm$/, () => drmScreen],
  [/^#\/watermarking$/, () => watermarkingScreen],
  [/^#\/settings$/, () => settingsScreen],
];

async function show() {
  leaving.abort();
  leaving = new AbortController();
  if (!session) {
    nav.hidden = true;
    signOutButton.hidden = true;
    fill(who);
    return fill(main, signInScreen(onSignedIn));
  }
  nav.hidden = false;
  signOutButton.hidden = false;
  fill(who, session.tenant.name, ' · ', session.tenant.roleType);
  const hash = location.hash;
  const section = /^#\/[a-z]+/.exec(hash)?.[0] ?? '#/';
  for (const a of nav.querySelectorAll('a')) a.toggleAttribute('aria-current', a.getAttribute('href') === section);
  for (const [pattern, screen] of ROUTES) {
    const m = pattern.exec(hash);
    if (m) {
      fill(main, screen()(session, { signal: leaving.signal, params: m.slice(1).map(decodeURIComponent) }));
      return;
    }
  }
  fill(main, h('h1', {}, 'Not found'), h('p', {}, h('a', { href: '#/' }, 'Back to the home page')));
}

function onSignedIn(s) {
  session = s;
  show();
}

signOutButton.addEventListener('click', () => {
  signOut();
  session = undefined;
  location.hash = '#/';
  show();
});
window.addEventListener('hashchange', () => {
  show();
  main.focus();
});

session = await resume();
show();
