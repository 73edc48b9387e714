/* A trace workload's charts (epbench.generator.trace_page): each spec in #epb-trace-config
 * carries its own few dozen rows; this embeds them with the vendored vega-embed, at the
 * width of their figure, in the palette in use, and again when the reader switches palettes
 * or resizes. Data reaches the page as JSON only. */
import { onResize } from './lib/dom.js';
import { canDraw, embed, onScheme, sized } from './lib/charts.js';

var source = document.getElementById('epb-trace-config');
if (source && canDraw()) {
  var charts = JSON.parse(source.textContent);
  var draw = function () {
    charts.forEach(function (c) {
      var holder = document.getElementById('epb-trace-chart-' + c.id);
      if (!holder) { return; }
      embed(holder, sized(c.spec, Math.max(240, holder.clientWidth - 24)))
        .then(function () { holder.setAttribute('data-ready', '1'); });
    });
  };
  draw();
  onScheme(draw);
  onResize(draw, 200);
}
