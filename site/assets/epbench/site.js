/* epbench, on every page: keeps `?emulated=1` across the site's own links, says how to serve
 * the site when it is opened from a file (browsers block the data files there), and holds what
 * the page scripts share (window.epbSite): number formatting, element building, the chart
 * colours of the light and dark palettes, notes for address parameters that were not applied.
 * Builds every element with createElement/textContent only. */
(function () {
  'use strict';

  var FILE_NOTE = 'This page was opened from a file, and browsers do not let a page read its ' +
    'data files from file://, so the leaderboards cannot load. Serve the site folder and open ' +
    'it over http instead:';
  var SERVE_COMMAND = 'python3 -m http.server --directory _site 8000';
  var SERVE_AFTER = 'then open http://localhost:8000/ (run the command in the folder that holds _site).';

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

  function fileNote() {
    var box = document.createElement('div');
    box.className = 'admonition warning epb-file-note';
    box.id = 'epb-file-note';
    var title = document.createElement('p');
    title.className = 'admonition-title';
    title.textContent = 'Serve the site to see the leaderboards';
    var text = document.createElement('p');
    text.textContent = FILE_NOTE;
    var code = document.createElement('pre');
    var inner = document.createElement('code');
    inner.textContent = SERVE_COMMAND;
    code.appendChild(inner);
    var after = document.createElement('p');
    after.textContent = SERVE_AFTER;
    [title, text, code, after].forEach(function (n) { box.appendChild(n); });
    return box;
  }

  function el(tag, attrs, text) {
    var node = document.createElement(tag);
    if (attrs) {
      Object.keys(attrs).forEach(function (key) { node.setAttribute(key, attrs[key]); });
    }
    if (text !== undefined && text !== null) { node.textContent = String(text); }
    return node;
  }

  // Thousands separators without Intl: toLocaleString costs ~20 us a call, too much for
  // thousands of cells per filter change.
  /* A labelled checkbox bound to one URL flag ('1' when ticked, '' when not), as the boards'
   * and the buyer pages' "Include ..." controls are: appended to `form`, kept in
   * `controls[name]`, and `update(name, value)` called on every change. */
  function flagBox(form, controls, update, name, id, label) {
    var box = el('input', { type: 'checkbox', name: name, id: id });
    box.addEventListener('change', function () { update(name, box.checked ? '1' : ''); });
    controls[name] = box;
    var wrap = el('div', { 'class': 'epb-field epb-check' });
    wrap.appendChild(box);
    wrap.appendChild(el('label', { 'for': id }, label));
    form.appendChild(wrap);
    return box;
  }

  function grouped(n) {
    var text = String(Math.abs(n));
    var out = '';
    while (text.length > 3) {
      out = ',' + text.slice(-3) + out;
      text = text.slice(0, -3);
    }
    return (n < 0 ? '-' : '') + text + out;
  }

  // Below this a figure is zero within float noise (a Wilson bound at no successes comes out
  // as 1e-17): it shows as 0, as number_format.py's NOISE.
  var NOISE = 1e-12;

  // Three significant figures, thousands separated, never an exponent (as number_format.py's
  // fmt_number): 2061.3 -> "2,060", 0.00008687 -> "0.0000869", 1e-7 -> "0.0000001".
  function sig3(v) {
    if (Math.abs(v) < NOISE) { return '0'; }
    var r = Number(v.toPrecision(3));
    if (Math.abs(r) >= 1000) { return grouped(Math.round(r)); }
    if (Math.abs(r) < 1e-6) {
      return r.toFixed(2 - Math.floor(Math.log10(Math.abs(r)))).replace(/\.?0+$/, '');
    }
    return String(r);
  }

  // Dollars to three significant figures, with whole cents under $1,000: 1.5 -> "$1.50",
  // 25 -> "$25.00", 0.0938 -> "$0.0938", 1160 -> "$1,160".
  function usd(v) {
    var text = sig3(v);
    var dot = text.indexOf('.');
    var decimals = dot < 0 ? 0 : text.length - dot - 1;
    if (Math.abs(Number(v.toPrecision(3))) < 1000 && Math.abs(v) >= 1e-6 && decimals < 2) { text = v.toFixed(2); }
    return (text.charAt(0) === '-' ? '-$' + text.slice(1) : '$' + text);
  }

  // A value as people read it. Formats: usd, pct (a 0..1 share), int, tps, ms, num.
  // Integers stay exact unless a unit format applies; the exact value goes in a tooltip.
  function fmt(value, format) {
    if (value === null || value === undefined || value === '') { return '\u2014'; }
    if (typeof value === 'boolean') { return value ? 'yes' : 'no'; }
    if (Array.isArray(value)) { return value.length ? value.join(', ') : '\u2014'; }
    if (typeof value === 'number') {
      if (!isFinite(value)) { return '\u2014'; }
      if (format === 'pct') { return sig3(value * 100) + '%'; }
      if (format === 'usd') { return usd(value); }
      if (format === 'int' || (Number.isInteger(value) && format !== 'tps' && format !== 'ms')) {
        return grouped(Math.round(value));
      }
      return sig3(value);
    }
    if (typeof value === 'object') { return JSON.stringify(value); }
    return String(value);
  }

  function plural(n, one, many) { return grouped(n) + ' ' + (n === 1 ? one : (many || one + 's')); }

  function dark() { return document.body && document.body.getAttribute('data-md-color-scheme') === 'slate'; }

  // A chart's own Vega config (`base`, the spec's) with the palette in use laid over it: text
  // and grid colours that read on its background. Each part (axis, legend, ...) is merged, so
  // the spec's own settings there (the legend's labelLimit) stay. With a width, the legend
  // goes under the plot, in as many columns as fit, so the plot keeps the width on a phone as
  // on a desktop.
  function chartConfig(base, width) {
    var fg = dark() ? '#d5d8e4' : '#333333';
    var grid = dark() ? '#3b3f52' : '#e4e4e4';
    var axis = { labelColor: fg, titleColor: fg, gridColor: grid, domainColor: fg, tickColor: fg };
    var palette = { background: null, axis: axis, legend: { labelColor: fg, titleColor: fg },
      title: { color: fg }, view: { stroke: grid } };
    var out = Object.assign({}, base || {});
    Object.keys(palette).forEach(function (key) {
      var mine = palette[key];
      out[key] = mine && typeof mine === 'object' ? Object.assign({}, out[key] || {}, mine) : mine;
    });
    if (width) {
      var columns = Math.max(1, Math.min(4, Math.floor(width / 210)));
      out.legend = Object.assign(out.legend, { orient: 'bottom', direction: 'vertical',
        columns: columns, labelLimit: Math.floor(width / columns) - 40 });
    }
    return out;
  }

  // Calls back when the reader switches between the light and dark palettes.
  function onScheme(callback) {
    if (!window.MutationObserver || !document.body) { return; }
    var last = dark();
    new MutationObserver(function () {
      if (dark() !== last) { last = dark(); callback(); }
    }).observe(document.body, { attributes: true, attributeFilter: ['data-md-color-scheme'] });
  }

  // A visible list of the address parameters that could not be applied, each with why.
  function paramNotes(host, problems) {
    var box = document.getElementById('epb-param-notes');
    if (!box) {
      box = el('div', { 'class': 'epb-param-notes', id: 'epb-param-notes', role: 'status' });
      host.insertBefore(box, host.firstChild);
    }
    box.textContent = '';
    box.hidden = !problems.length;
    if (!problems.length) { return; }
    box.appendChild(el('p', { 'class': 'epb-param-title' }, problems.length === 1
      ? 'One part of the address could not be applied:' : problems.length + ' parts of the address could not be applied:'));
    var list = el('ul');
    problems.forEach(function (p) { list.appendChild(el('li', null, p)); });
    box.appendChild(list);
  }

  // The error text of a failed data load, with the way out when the page came from a file.
  function loadFailed(host, err) {
    host.setAttribute('data-error', String(err && err.message || err));
    if (window.location.protocol === 'file:') {
      if (!document.getElementById('epb-file-note')) { host.appendChild(fileNote()); }
      return;
    }
    host.appendChild(el('p', { 'class': 'epb-note' },
      'The leaderboard data could not be loaded: ' + (err && err.message || err)));
  }

  // Why a row is not ranked: the `unranked_reasons` column (a list, or "; "-joined text) when
  // the tables carry it, else what `rankable` alone says.
  function unrankedReasons(row) {
    var r = row.unranked_reasons;
    if (Array.isArray(r) && r.length) { return r; }
    if (typeof r === 'string' && r) { return r.split('; '); }
    if (row.rankable !== false) { return []; }
    return [row.division === 'emulated' ? 'emulated endpoint: epbench\u2019s own emulator, never ranked'
      : 'not rankable'];
  }

  // The reasons a row is not ranked in the reader's view: a self-reported row's first reason is
  // its tier's (epcore/rankable.py puts it first), and a reader who includes self-reported
  // results sets it aside, so such a row with no other reason ranks.
  function viewReasons(row, includeSelfReported) {
    var reasons = unrankedReasons(row);
    if (includeSelfReported && row.tier === 'self-reported' && reasons.length) {
      return reasons.slice(1);
    }
    return reasons;
  }

  // A row's provenance tier as a badge, with its reason in the tooltip (the boards' rows, the
  // buyer pages' rows); null for a row that carries no tier.
  function tierBadge(row) {
    if (!row.tier) { return null; }
    return el('span', { 'class': 'epb-badge epb-tier', title: 'Provenance: ' + row.tier +
      (row.tier_reason ? ' (' + row.tier_reason + ')' : '') }, row.tier);
  }

  // A compact view file ({columns, rows}) as one object per row.
  function toObjects(view) {
    var cols = view.columns;
    return view.rows.map(function (values) {
      var row = {};
      for (var i = 0; i < cols.length; i++) { row[cols[i]] = values[i]; }
      return row;
    });
  }

  // Fetch a view file from this site and return its rows (rejects with the file's name).
  function fetchView(url) {
    return fetch(url, { credentials: 'same-origin' }).then(function (resp) {
      if (!resp.ok) { throw new Error('cannot load ' + url); }
      return resp.json();
    }).then(toObjects);
  }

  // A table wider than its scroll box says so in `hint` (a <p> above it), with how many
  // columns lie to the right and the first of their names; hidden when the table fits.
  function scrollHint(scroll, table, hint) {
    var heads = table.tHead ? table.tHead.rows[0].cells : [];
    var edge = scroll.getBoundingClientRect().right;
    var hidden = Array.prototype.filter.call(heads, function (th) {
      return th.getBoundingClientRect().right > edge + 1;
    }).length;
    hint.hidden = hidden === 0;
    hint.textContent = hidden ? 'The table is wider than the page: scroll it sideways for ' +
      plural(hidden, 'more column') + ' (' + Array.prototype.slice.call(heads, -hidden)
      .map(function (th) { return th.textContent.replace(/\s*\?$/, ''); }).slice(0, 4).join(', ') +
      (hidden > 4 ? ', \u2026' : '') + ').' : '';
  }

  // The page's own tables with a header row (a result's points, an endpoint's runs) get the
  // boards' note when they are wider than the page; measured on load and on resize.
  function staticHints() {
    var found = [];
    Array.prototype.forEach.call(document.querySelectorAll('.md-content .epb-scroll'), function (scroll) {
      var table = scroll.querySelector('table');
      if (!table || !table.tHead || !table.tHead.rows.length || scroll.closest('#epb-board')) { return; }
      var hint = el('p', { 'class': 'epb-scroll-hint', hidden: 'hidden' });
      scroll.parentNode.insertBefore(hint, scroll);
      found.push([scroll, table, hint]);
    });
    if (!found.length) { return; }
    var update = function () { found.forEach(function (f) { scrollHint(f[0], f[1], f[2]); }); };
    update();
    var timer = null;
    window.addEventListener('resize', function () { clearTimeout(timer); timer = setTimeout(update, 150); });
  }

  // The suite tables (agentic_suite.html.j2) are pooled four ways; the reader's controls pick
  // one: every result, all but self-reported ones, ranked with self-reported ones, ranked only.
  function suitePool(includeSelf, includeUnranked) {
    if (includeUnranked) { return includeSelf ? 'all' : 'unranked'; }
    return includeSelf ? 'self' : 'ranked';
  }

  function showSuitePool(pool) {
    var box = document.getElementById('epb-suite');
    if (!box) { return; }
    Array.prototype.forEach.call(box.querySelectorAll('.epb-suite-pool'), function (div) {
      div.hidden = (div.getAttribute('data-pools') || '').split(' ').indexOf(pool) < 0;
    });
  }

  window.epbSite = {
    suitePool: suitePool,
    showSuitePool: showSuitePool,
    scrollHint: scrollHint,
    fetchView: fetchView,
    unrankedReasons: unrankedReasons,
    viewReasons: viewReasons,
    tierBadge: tierBadge,
    el: el,
    flagBox: flagBox,
    fmt: fmt,
    grouped: grouped,
    plural: plural,
    chartConfig: chartConfig,
    onScheme: onScheme,
    paramNotes: paramNotes,
    loadFailed: loadFailed,
    fileNote: fileNote,
    emulatedWanted: emulatedWanted
  };

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
    if (!holder || !box || typeof window.vegaEmbed !== 'function') { return; }
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
      box.epbReady = window.vegaEmbed(view, shown, { mode: 'vega-lite', actions: false,
        renderer: 'canvas', ast: true, logLevel: 1 });
    };
    draw();
    onScheme(draw);
  }

  function start() {
    markTab();
    staticHints();
    capacityCharts();
    if (window.location.protocol === 'file:') {
      var content = document.querySelector('.md-content__inner');
      if (content && !document.getElementById('epb-file-note')) {
        content.insertBefore(fileNote(), content.firstChild);
      }
    }
    if (emulatedWanted()) {
      Array.prototype.forEach.call(document.querySelectorAll('a[href]'), keepEmulated);
      // Links built later (table rows, tabs of the header) get it when they are followed.
      document.addEventListener('click', function (e) {
        var a = e.target && e.target.closest ? e.target.closest('a[href]') : null;
        if (a) { keepEmulated(a); }
      }, true);
    }
  }

  if (document.readyState === 'loading') {
    document.addEventListener('DOMContentLoaded', start);
  } else {
    start();
  }
})();
