/* Vega charts in the page's palette: the vendored vega-embed (window.vegaEmbed, a classic
 * script loaded before the modules), the expression interpreter instead of eval (the CSP has
 * no 'unsafe-eval'), canvas at a fixed pixel width, rows replaced by a changeset. */

function dark() { return document.body && document.body.getAttribute('data-md-color-scheme') === 'slate'; }

// A chart's own Vega config (`base`, the spec's) with the palette in use laid over it: text
// and grid colours that read on its background. Each part (axis, legend, ...) is merged, so
// the spec's own settings there (the legend's labelLimit) stay. With a width, the legend
// goes under the plot, in as many columns as fit, so the plot keeps the width on a phone as
// on a desktop.
export function chartConfig(base, width) {
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
export function onScheme(callback) {
  if (!window.MutationObserver || !document.body) { return; }
  var last = dark();
  new MutationObserver(function () {
    if (dark() !== last) { last = dark(); callback(); }
  }).observe(document.body, { attributes: true, attributeFilter: ['data-md-color-scheme'] });
}

// Whether the vendored bundle is on the page (pages with no chart do not load it).
export function canDraw() { return typeof window.vegaEmbed === 'function'; }

// `spec` at `width` pixels in the palette in use (`config`, else the spec's own config in it);
// fit-x with padding: axis labels and the legend fit inside the width.
export function sized(spec, width, config) {
  return Object.assign({}, spec, { width: width, config: config || chartConfig(spec.config, width),
    autosize: { type: 'fit-x', contains: 'padding' } });
}

// Embeds a Vega-Lite spec into `holder`; resolves with vega-embed's result ({view, ...}).
export function embed(holder, spec) {
  return window.vegaEmbed(holder, spec, {
    mode: 'vega-lite', actions: false, renderer: 'canvas', ast: true,
    logLevel: 1  // vega.Error: an empty selection is not worth a console warning
  });
}

// The embedded view's dataset `name` now holds `rows`, and the view is drawn again.
// The bundle's window.vega is not the module, but every View is a Dataflow with changeset().
export function replaceRows(view, name, rows) {
  var cs = view.changeset().remove(function () { return true; }).insert(rows);
  // resize(): recompute the padding for axis labels of the new data (autosize "pad").
  return view.change(name, cs).resize().runAsync();
}
