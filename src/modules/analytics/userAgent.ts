/**
 * The browser, operating system and device class of a User-Agent, for the analytics dimensions. A short ordered list
 * of tokens covers the browsers that play MSE video; anything else is `Other`. Order matters: Edge and Opera say
 * "Chrome" too, and Chrome says "Safari".
 */
const BROWSERS: [RegExp, string][] = [
  [/Edg(e|A|iOS)?\//, 'Edge'],
  [/OPR\/|Opera/, 'Opera'],
  [/SamsungBrowser\//, 'Samsung Internet'],
  [/Firefox\/|FxiOS\//, 'Firefox'],
  [/HeadlessChrome\//, 'Headless Chrome'],
  [/Chrome\/|CriOS\/|Chromium\//, 'Chrome'],
  [/Safari\//, 'Safari'],
];
const SYSTEMS: [RegExp, string][] = [
  [/Windows/, 'Windows'],
  [/Android/, 'Android'],
  [/iPhone|iPad|iPod/, 'iOS'],
  [/Mac OS X|Macintosh/, 'macOS'],
  [/CrOS/, 'ChromeOS'],
  [/Linux/, 'Linux'],
];

export interface Client {
  browser: string;
  os: string;
  deviceType: string;
}

export function clientOf(userAgent: string | undefined): Client {
  const ua = userAgent ?? '';
  const browser = BROWSERS.find(([re]) => re.test(ua))?.[1] ?? 'Other';
  const os = SYSTEMS.find(([re]) => re.test(ua))?.[1] ?? 'Other';
  const deviceType = /SmartTV|SMART-TV|HbbTV|AppleTV|CrKey|Tizen|Web0S/i.test(ua)
    ? 'TV'
    : /iPad|Tablet/.test(ua) || (/Android/.test(ua) && !/Mobile/.test(ua))
      ? 'Tablet'
      : /Mobi|iPhone|iPod/.test(ua)
        ? 'Mobile'
        : 'Desktop';
  return { browser, os, deviceType };
}
