/* epbench, on every page (an ES module, loaded after the page is parsed): keeps `?emulated=1`
 * across the site's own links, marks the header tab of a page outside the navigation, notes
 * tables wider than the page, and draws the agents-at-SLO chart a page carries. What the page
 * scripts share lives in lib/ (one module per feature). Builds every element with
 * createElement/textContent only. */
import { el } from './lib/dom.js';
import { fetchView } from './lib/data.js';
import { fmt } from './lib/format.js';
import { canDraw, chartConfig, embed, onScheme } from './lib/charts.js';
import { staticHints } from './lib/tables.js';

function emulatedWanted() {
  return new URLSearchParams(window.location.search).get('emulated') === '1';
}

// A link of this site to a page (not a download, not an anchor on this page).
function ownPage(a) {
  var href = a.getAttribute('href');
  if (!href || href.charAt(0) === '#' || a.hasAttribute('download')) { return null; }
  var url;
  try { url = new URL(href, window.location.href); } catch (e) { return null; }
  if (url.origin !== window.location.origin || url.protocol.indexOf('http') !== 0) { return null; }
  if (/\.(json|csv|js|css|png|svg|xml|gz|txt)$/i.test(url.pathname)) { return null; }
  return url;
}

function keepEmulated(a) {
  var url = ownPage(a);
  if (!url || url.searchParams.get('emulated') === '1') { return; }
  url.searchParams.set('emulated', '1');
  a.setAttribute('href', url.pathname + url.search + url.hash);
}

// Pages outside the navigation (a result, an endpoint, a workload) name the header tab they
// belong to with data-epb-tab on their content; the theme marks only pages in the nav.
function markTab() {
  var owner = document.querySelector('[data-epb-tab]');
  if (!owner || document.querySelector('.md-tabs__item--active')) { return; }
  var wanted = owner.getAttribute('data-epb-tab');
  Array.prototype.forEach.call(document.querySelectorAll('.md-tabs__item'), function (item) {
    var link = item.querySelector('.md-tabs__link');
    if (link && link.textContent.trim() === wanted) { item.classList.add('md-tabs__item--active'); }
  });
}

// ---- Agents at SLO (capacity.html.j2): a chart whose spec and rows the page carries. On the
// compare page (data-filter-endpoints) only the endpoints in ?endpoints= are kept, when given.
function capacityCharts() {
  var holder = document.querySelector('[data-epb-capacity]');
  var box = document.getElementById('epb-capacity');
  if (!holder || !box || !canDraw()) { return; }
  var source = document.getElementById(holder.getAttribute('data-epb-capacity'));
  if (!source) { return; }
  var spec = JSON.parse(source.textContent);
  var picked = new URLSearchParams(window.location.search).get('endpoints');
  if (box.getAttribute('data-filter-endpoints') && picked) {
    var keep = picked.split(',');
    spec.datasets.rows = spec.datasets.rows.filter(function (r) {
      return keep.indexOf(r.endpoint_id) >= 0;
    });
    Array.prototype.forEach.call(box.querySelectorAll('[data-endpoint]'), function (div) {
      div.hidden = keep.indexOf(div.getAttribute('data-endpoint')) < 0;
    });
  }
  var draw = function () {
    var width = Math.max(260, Math.floor(holder.getBoundingClientRect().width) - 120);
    var shown = Object.assign({}, spec, { config: chartConfig(spec.config, width) });
    shown.vconcat = spec.vconcat.map(function (part) { return Object.assign({}, part, { width: width }); });
    holder.textContent = '';
    var view = el('div', { 'class': 'epb-chart-view' });
    holder.appendChild(view);
    box.epbReady = embed(view, shown);
  };
  draw();
  onScheme(draw);
}

// For the browser tests and the console: the site's own number formatting and view reader.
window.epbSite = { fmt: fmt, fetchView: fetchView };

markTab();
staticHints();
capacityCharts();
if (emulatedWanted()) {
  Array.prototype.forEach.call(document.querySelectorAll('a[href]'), keepEmulated);
  // Links built later (table rows, tabs of the header) get it when they are followed.
  document.addEventListener('click', function (e) {
    var a = e.target && e.target.closest ? e.target.closest('a[href]') : null;
    if (a) { keepEmulated(a); }
  }, true);
}
