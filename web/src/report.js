// Boots the HTML report: reads the model the page carries (<script id="memtrack-data">: JSON,
// gzip-compressed, in base64; inflated by the browser's DecompressionStream) and renders it
// with the views. window.memtrack holds the model, the views and when the page was ready (ms
// from navigation start), for tests and measurements.
(async function () {
  'use strict';
  const app = document.getElementById('app');

  async function readModel() {
    const binary = atob(document.getElementById('memtrack-data').textContent.trim());
    const bytes = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    const json = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'));
    return JSON.parse(await new Response(json).text());
  }

  try {
    const start = performance.now();
    const model = await readModel();
    const parsed = performance.now();
    const views = window.MemtrackViews.renderReport(app, model);
    const ready = performance.now();
    window.memtrack = {model, views, readyMs: ready, timing: {scriptStart: start, parsed, ready}};
    document.body.dataset.ready = 'true';
  } catch (error) {
    app.replaceChildren(document.createTextNode('memtrack: this report cannot be shown: ' + error));
    throw error;
  }
})();
