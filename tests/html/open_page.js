// Opens a memtrack page (the leak report or a heap profile's) in headless Chromium for the
// browser tests: every request but the page itself is refused and recorded, and so are
// console errors and warnings and uncaught exceptions. Resolves once the page says it is
// ready and its flame graph is drawn.
'use strict';

async function openPage(browser, file, scheme) {
  const page = await browser.newPage();
  const problems = [];
  const url = 'file://' + file;
  await page.setRequestInterception(true);
  page.on('request', (request) => {
    if (request.url() === url) return request.continue();
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
  await page.waitForSelector('.flame[data-drawn=true]', {timeout: 30000});
  await new Promise((resolve) => setTimeout(resolve, 100));  // the drawing's zero-length transition
  return {page, problems};
}

module.exports = {openPage};
