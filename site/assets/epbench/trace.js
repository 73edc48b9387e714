/* A trace workload's charts (epbench.generator.trace_page): each spec in #epb-trace-config
 * carries its own few dozen rows; this embeds them with the vendored vega-embed, at the
 * width of their figure, in the palette in use (window.epbSite.chartConfig), and again when
 * the reader switches palettes or resizes. Data reaches the page as JSON only. */
(function () {
  'use strict';
  var S = window.epbSite;
  var source = document.getElementById('epb-trace-config');
  if (!source || typeof window.vegaEmbed !== 'function') { return; }
  var charts = JSON.parse(source.textContent);

  function draw() {
    charts.forEach(function (c) {
      var holder = document.getElementById('epb-trace-chart-' + c.id);
      if (!holder) { return; }
      var width = Math.max(240, holder.clientWidth - 24);
      var spec = Object.assign({}, c.spec, { width: width,
        config: S ? S.chartConfig(c.spec.config, width) : c.spec.config,
        autosize: { type: 'fit-x', contains: 'padding' } });
      window.vegaEmbed(holder, spec, { mode: 'vega-lite', actions: false, renderer: 'canvas',
        ast: true, logLevel: 1 }).then(function () { holder.setAttribute('data-ready', '1'); });
    });
  }

  draw();
  if (S) { S.onScheme(draw); }
  var timer = null;
  window.addEventListener('resize', function () { clearTimeout(timer); timer = setTimeout(draw, 200); });
}());
