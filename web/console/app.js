// The console's entry: sign in, then one screen per address (`#/`, `#/assets`, `#/assets/<id>`, `#/channels`, `#/channels/<id>`, `#/streaming`, `#/streaming/<id>`, `#/drm`, `#/watermarking`, `#/settings`), each
// drawn by its module.
import { errorText, fill, h } from '/console/dom.js';
import { resume, signOut } from '/console/session.js';
import { signInScreen } from '/console/signin.js';

const main = document.getElementById('main');
const nav = document.getElementById('nav');
const who = document.getElementById('who');
const signOutButton = document.getElementById('signout');
let session;
/** Aborted when the screen is left: its polls and requests stop. */
let leaving = new AbortController();

/**
 * Each address and how its screen is loaded: a screen's modules are fetched when it is first shown (a dynamic
 * `import()`, kept by the browser after), so the first page loads the sign-in and the home screen only, not every screen.
 */
const ROUTES = [
  [/^#?\/?$/, () => import('/console/home.js').then((m) => m.homeScreen)],
  [/^#\/assets$/, () => import('/console/assets.js').then((m) => m.assetsScreen)],
  [/^#\/assets\/([^/]+)$/, () => import('/console/asset.js').then((m) => m.assetScreen)],
  [/^#\/channels$/, () => import('/console/channels.js').then((m) => m.channelsScreen)],
  [/^#\/channels\/([^/]+)$/, () => import('/console/channel.js').then((m) => m.channelScreen)],
  [/^#\/streaming$/, () => import('/console/streaming.js').then((m) => m.streamingScreen)],
  [/^#\/streaming\/([^/]+)$/, () => import('/console/catalogueAsset.js').then((m) => m.catalogueAssetScreen)],
  [/^#\/drm$/, () => import('/console/drm.js').then((m) => m.drmScreen)],
  [/^#\/watermarking$/, () => import('/console/watermarking.js').then((m) => m.watermarkingScreen)],
  [/^#\/settings$/, () => import('/console/settings.js').then((m) => m.settingsScreen)],
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
  for (const [pattern, load] of ROUTES) {
    const m = pattern.exec(hash);
    if (m) {
      const { signal } = leaving;
      let screen;
      try {
        screen = await load();
      } catch (e) {
        // A module that could not be fetched (the network, a restart of the platform): said, and tried again on reload.
        if (!signal.aborted) fill(main, h('h1', {}, 'Not loaded'), h('p', { class: 'alert', role: 'alert' }, errorText(e)));
        return;
      }
      // Left while its modules came: the screen shown now is another's.
      if (!signal.aborted) fill(main, screen(session, { signal, params: m.slice(1).map(decodeURIComponent) }));
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
