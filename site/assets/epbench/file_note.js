/* epbench, on every page, the one classic (non-module) script: a page opened from a file runs
 * none of the site's modules (browsers load no ES module from file://, and no data file), so
 * this says how to serve the site instead, above the content and on each board's element
 * (`data-error`). Over http it does nothing. Builds its elements with createElement only. */
(function () {
  'use strict';
  if (window.location.protocol !== 'file:') { return; }
  var content = document.querySelector('.md-content__inner');
  if (!content || document.getElementById('epb-file-note')) { return; }

  function para(className, text) {
    var p = document.createElement('p');
    if (className) { p.className = className; }
    p.textContent = text;
    return p;
  }

  var box = document.createElement('div');
  box.className = 'admonition warning epb-file-note';
  box.id = 'epb-file-note';
  box.appendChild(para('admonition-title', 'Serve the site to see the leaderboards'));
  box.appendChild(para('', 'This page was opened from a file, and browsers do not let a page ' +
    'load its scripts and data files from file://, so the leaderboards cannot load. Serve the ' +
    'site folder and open it over http instead:'));
  var code = document.createElement('pre');
  var inner = document.createElement('code');
  inner.textContent = 'python3 -m http.server --directory _site 8000';
  code.appendChild(inner);
  box.appendChild(code);
  box.appendChild(para('', 'then open http://localhost:8000/ (run the command in the folder ' +
    'that holds _site).'));
  content.insertBefore(box, content.firstChild);
  ['epb-board', 'epb-buyer'].forEach(function (id) {
    var host = document.getElementById(id);
    if (host) { host.setAttribute('data-error', 'opened from a file: scripts and data do not load from file://'); }
  });
})();
