// Opens a memtrack page in headless Chromium for the browser tests (the leak report, a heap
// profile's, memtrack ui's): every request the page may not make is refused and recorded, and
// so are console errors and warnings and uncaught exceptions. Resolves once the page says it
// is ready (and, for a report file, once its flame graph is drawn).
'use strict';

// Opens `url`; a request for which allowed(requestUrl) is false is refused and recorded.
// scheme: 'light' (default) or 'dark'. flame: wait for the flame graph to be drawn.
async function openUrl(browser, url, {allowed, scheme, flame}) {
  const page = await browser.newPage();
  const problems = [];
  await page.setRequestInterception(true);
  page.on('request', (request) => {
    if (allowed(request.url())) return request.continue();
    problems.push('network request: ' + request.url());
    return request.abort();
  });
  page.on('console', (message) => {
    if (message.type() === 'error' || message.type() === 'warn') problems.push(`console ${message.type()}: ${message.text()}`);
  });
  page.on('pageerror', (error) => problems.push('page error: ' + error.message));
  await page.emulateMediaFeatures([{name: 'prefers-color-scheme', value: scheme || 'light'}]);
  await page.setViewport({width: 1280, height: 900});
  await page.goto(url, {waitUntil: 'load', timeout: 30000});
  await page.waitForFunction(() => document.body.dataset.ready === 'true', {timeout: 30000});
  if (flame) {
    await page.waitForSelector('.flame[data-drawn=true]', {timeout: 30000});
    await new Promise((resolve) => setTimeout(resolve, 100));  // the drawing's zero-length transition
  }
  return {page, problems};
}

// A report file (the leak report or a heap profile's): no request but the page itself.
async function openPage(browser, file, scheme) {
  const url = 'file://' + file;
  return openUrl(browser, url, {allowed: (requested) => requested === url, scheme, flame: true});
}

// A page served over HTTP (memtrack ui): no request to another origin.
async function openServedPage(browser, url) {
  const origin = new URL(url).origin;
  return openUrl(browser, url, {allowed: (requested) => requested.startsWith(origin + '/')});
}

module.exports = {openPage, openServedPage};
