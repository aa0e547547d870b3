// Boots the HTML report: reads the model the page carries (<script id="memtrack-data">) and
// renders it with the views. window.memtrack holds the views and the time it took (ms from
// navigation start until the page was interactive), for tests and measurements.
(function () {
  'use strict';
  const app = document.getElementById('app');
  try {
    const start = performance.now();
    const model = JSON.parse(document.getElementById('memtrack-data').textContent);
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
