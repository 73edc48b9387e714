"""The leaderboard's charts as vega-altair specifications.

Each chart reads one named dataset, `rows`, which the page's JavaScript fills from the filtered
tables (a Vega changeset on every filter change, no re-embedding). The JavaScript reduces the
filtered rows first, so a chart draws tens of marks, not tens of thousands: `reduce` names the
reducer in site/assets/epbench/lib/reducers.js (`REDUCERS`) and `caption` says what it did, for
every reader. Tooltips list exact field values (no rounding format).
"""

from __future__ import annotations

import copy
import functools
from dataclasses import dataclass, field
from typing import Any

import altair as alt

DATASET = "rows"
HEIGHT = 320


@dataclass(frozen=True)
class ChartSpec:
    """One chart on a leaderboard page."""

    id: str
    title: str
    caption: str
    source: str  # which view table feeds it: runs, points, agentic, history
    reduce: str  # reducer name in lib/reducers.js REDUCERS
    spec: dict[str, Any]
    alt_columns: list[tuple[str, str]] = field(default_factory=list)
    fields: tuple[str, ...] = ()  # what a row needs to be drawn (the summary counts those)

    def to_config(self) -> dict[str, Any]:
        """What the page's JavaScript needs, for the board's JSON configuration."""
        return {
            "id": self.id,
            "title": self.title,
            "caption": self.caption,
            "source": self.source,
            "reduce": self.reduce,
            "dataset": DATASET,
            "spec": self.spec,
            "alt_columns": [{"key": k, "label": label} for k, label in self.alt_columns],
            "fields": list(self.fields),
        }


def _base() -> alt.Chart:
    return alt.Chart(alt.NamedData(DATASET))


def _finish(chart: alt.TopLevelMixin) -> dict[str, Any]:
    # No width: board.js sets a pixel width measured once on the page (SITE_DESIGN.md).
    spec: dict[str, Any] = chart.properties(height=HEIGHT).to_dict()
    # The mode is given to vega-embed; the schema URL would only be a string naming another
    # origin, and the page names none.
    spec.pop("$schema", None)
    spec.setdefault("config", {})["legend"] = {"symbolLimit": 24, "labelLimit": 280}
    return spec


SERIES = alt.Color("series:N", title="endpoint · workload")


def pareto_chart() -> ChartSpec:
    """Pareto frontier per endpoint and workload: system_tps against tps_per_user, a step."""
    base = _base()
    frontier = base.transform_filter("datum.frontier").mark_line(
        interpolate="step-before", strokeWidth=2
    ).encode(
        x=alt.X("tps_per_user:Q", title="per-user speed (output tokens/s per user)"),
        y=alt.Y("system_tps:Q", title="system throughput (output tokens/s)"),
        color=SERIES,
        order=alt.Order("tps_per_user:Q"),
    )
    points = base.mark_point(filled=True, size=50).encode(
        x="tps_per_user:Q",
        y="system_tps:Q",
        color=SERIES,
        opacity=alt.condition("datum.frontier", alt.value(1.0), alt.value(0.3)),
        tooltip=["series:N", "run_id:N", "point:N", "tps_per_user:Q", "system_tps:Q",
                 "frontier:N"],
    )
    return ChartSpec(
        id="pareto",
        title="Throughput against per-user speed (Pareto frontier)",
        caption=(
            "For each endpoint and workload, the frontier over every point of the filtered "
            "results: the highest system throughput reachable at each per-user speed or "
            "faster, drawn as a step. Faint points are below the frontier (drawn when at most "
            "400 points match)."
        ),
        source="points",
        reduce="frontier",
        fields=("tps_per_user", "system_tps"),
        spec=_finish(alt.layer(frontier, points)),
        alt_columns=[("series", "endpoint · workload"), ("point", "point"),
                     ("tps_per_user", "per-user speed (tok/s)"),
                     ("system_tps", "system throughput (tok/s)"),
                     ("run_id", "run")],
    )


def ttft_chart() -> ChartSpec:
    """TTFT p90 against concurrency, median over the filtered results per series."""
    chart = _base().mark_line(point=True).encode(
        x=alt.X("concurrency:Q", title="concurrency", scale=alt.Scale(type="log", base=2)),
        y=alt.Y("ttft_ms_p90:Q", title="TTFT p90 (ms)"),
        color=SERIES,
        order=alt.Order("concurrency:Q"),
        tooltip=["series:N", "concurrency:Q", "ttft_ms_p90:Q", "n:Q"],
    )
    return ChartSpec(
        id="ttft",
        title="Time to first token (p90) against concurrency",
        caption=(
            "Median over the filtered results of each point's TTFT p90, per endpoint, workload "
            "and concurrency (n = results in the median). Open-loop points have no concurrency "
            "and are not drawn."
        ),
        source="points",
        reduce="ttft_by_concurrency",
        fields=("concurrency", "ttft_ms_p90"),
        spec=_finish(chart),
        alt_columns=[("series", "endpoint · workload"), ("concurrency", "concurrency"),
                     ("ttft_ms_p90", "TTFT p90 ms"), ("n", "n")],
    )


def cost_chart() -> ChartSpec:
    """USD per million output tokens against tps_per_user."""
    chart = _base().mark_point(filled=True, size=60).encode(
        x=alt.X("tps_per_user:Q", title="per-user speed (output tokens/s per user)"),
        y=alt.Y("usd_per_mtok_output:Q", title="USD per million output tokens"),
        color=SERIES,
        tooltip=["series:N", "point:N", "tps_per_user:Q", "usd_per_mtok_output:Q", "n:Q"],
    )
    return ChartSpec(
        id="cost",
        title="Cost per million output tokens against per-user speed",
        caption=(
            "Median over the filtered results per endpoint, workload and point id of the "
            "point's USD per million output tokens (price card pinned at run time) and its "
            "per-user speed. Points without a price are not drawn."
        ),
        source="points",
        reduce="cost_by_speed",
        fields=("tps_per_user", "usd_per_mtok_output"),
        spec=_finish(chart),
        alt_columns=[("series", "endpoint · workload"), ("point", "point"),
                     ("tps_per_user", "per-user speed (tok/s)"),
                     ("usd_per_mtok_output", "USD per M output tokens"), ("n", "n")],
    )


def success_chart() -> ChartSpec:
    """Agentic success rate against p90 decision time, with the 95% interval."""
    base = _base()
    interval = base.mark_rule(strokeWidth=2).encode(
        x=alt.X("decision_ms_p90:Q", title="decision time p90 (ms)"),
        y=alt.Y("success_ci_low:Q", title="task success rate",
                scale=alt.Scale(domain=[0, 1]), axis=alt.Axis(format="%")),
        y2="success_ci_high:Q",
        color=SERIES,
    )
    points = base.mark_point(filled=True, size=70).encode(
        x="decision_ms_p90:Q",
        y="success_rate:Q",
        color=SERIES,
        tooltip=["series:N", "run_id:N", "success_rate:Q", "success_ci_low:Q",
                 "success_ci_high:Q", "decision_ms_p90:Q", "date:N"],
    )
    return ChartSpec(
        id="success",
        title="Task success rate against decision time (p90), with 95% intervals",
        caption=(
            "The newest filtered result per endpoint and workload: its success rate with the "
            "95% confidence interval as a vertical bar, against its p90 decision time "
            "(request sent to the last tool-call argument byte)."
        ),
        source="agentic",
        reduce="latest",
        fields=("decision_ms_p90", "success_rate"),
        spec=_finish(alt.layer(interval, points)),
        alt_columns=[("series", "endpoint · workload"), ("success_rate", "success rate"),
                     ("success_ci_low", "95% low"), ("success_ci_high", "95% high"),
                     ("decision_ms_p90", "decision p90 ms"), ("date", "date")],
    )


def retry_chart() -> ChartSpec:
    """Retry cost per tag as stacked bars."""
    chart = _base().mark_bar().encode(
        y=alt.Y("series:N", title=None, sort="-x"),
        x=alt.X("sum(usd):Q", title="spend (USD), stacked by request tag"),
        color=alt.Color("tag:N", title="tag",
                        scale=alt.Scale(domain=["productive", "repair", "recovery",
                                                "transport"])),
        tooltip=["series:N", "tag:N", "usd:Q", "requests:Q", "tokens:Q", "seconds:Q"],
    )
    return ChartSpec(
        id="retry",
        title="Spend per request tag (productive, repair, recovery, transport)",
        caption=(
            "The newest filtered result per endpoint and workload; each bar is that run's "
            "spend split by why each request was sent. Results without a price have no bar."
        ),
        source="agentic",
        reduce="retry_by_tag",
        fields=("usd",),
        spec=_finish(chart),
        alt_columns=[("series", "endpoint · workload"), ("tag", "tag"), ("usd", "USD"),
                     ("requests", "requests"), ("tokens", "tokens"), ("seconds", "seconds")],
    )


def usd_per_success_chart() -> ChartSpec:
    """USD per successful agentic task."""
    chart = _base().mark_bar().encode(
        y=alt.Y("series:N", title=None, sort="x"),
        x=alt.X("usd_per_successful_task:Q", title="USD per successful task (retries included)"),
        color=SERIES,
        tooltip=["series:N", "run_id:N", "usd_per_successful_task:Q", "success_rate:Q"],
    )
    return ChartSpec(
        id="usd_per_success",
        title="Cost per successful task",
        caption=(
            "The newest filtered result per endpoint and workload: total spend, retries "
            "included, divided by successful trials. Lower is better."
        ),
        source="agentic",
        reduce="latest_priced",
        fields=("usd_per_successful_task",),
        spec=_finish(chart),
        alt_columns=[("series", "endpoint · workload"),
                     ("usd_per_successful_task", "USD per successful task"),
                     ("success_rate", "success rate")],
    )


# ---- agents under load (workloads with load levels): the board's two charts, whose rows the
# `load_levels` reducer of lib/reducers.js makes from the newest result per series, one per level
_AGENTS_X = alt.X("agents:Q", title="concurrent agents", scale=alt.Scale(type="log", base=2),
                  axis=alt.Axis(values=[1, 2, 4, 8, 16, 32, 64]))
_AGENTS_ALT = [("series", "endpoint · workload"), ("agents", "concurrent agents"),
               ("success_rate", "success rate"), ("success_ci_low", "95% low"),
               ("success_ci_high", "95% high"), ("decision_ms_p90", "decision p90 ms"),
               ("slo_ms", "SLO ms"), ("at_slo", "at SLO")]
_AGENTS_TIPS = ["series:N", "agents:Q", "success_rate:Q", "success_ci_low:Q",
                "success_ci_high:Q", "decision_ms_p90:Q", "slo_ms:Q", "at_slo:N", "run_id:N"]


def agents_success_chart() -> ChartSpec:
    """Task success with its 95% interval against concurrent agents, per series."""
    base = _base()
    hollow = alt.condition("datum.at_slo", alt.value(1.0), alt.value(0.0))
    chart = alt.layer(
        base.mark_rule(strokeWidth=2).encode(
            x=_AGENTS_X, y=alt.Y("success_ci_low:Q", title="task success",
                                 scale=alt.Scale(domain=[0, 1]), axis=alt.Axis(format="%")),
            y2="success_ci_high:Q", color=SERIES),
        base.mark_point(size=80, strokeWidth=2).encode(
            x=_AGENTS_X, y="success_rate:Q", color=SERIES, fill=alt.Fill("series:N", legend=None),
            fillOpacity=hollow, tooltip=_AGENTS_TIPS),
    )
    return ChartSpec(
        id="agents_success",
        title="Task success against concurrent agents, with 95% intervals",
        caption=("Workloads with load levels, the newest filtered result per endpoint and "
                 "workload: each level's success with its 95% interval; a hollow mark is a "
                 "level past the SLO (agents at SLO is the last filled one)."),
        source="agentic", reduce="load_levels", fields=("agents", "success_rate"),
        spec=_finish(chart), alt_columns=list(_AGENTS_ALT),
    )


def agents_decision_chart() -> ChartSpec:
    """Step decision p90 against concurrent agents, with each workload's SLO."""
    base = _base()
    hollow = alt.condition("datum.at_slo", alt.value(1.0), alt.value(0.0))
    chart = alt.layer(
        base.mark_line(strokeWidth=1, strokeDash=[2, 2]).encode(
            x=_AGENTS_X, y=alt.Y("decision_ms_p90:Q", title="step decision p90 (ms)"),
            color=SERIES, order="agents:Q"),
        base.mark_point(size=80, strokeWidth=2).encode(
            x=_AGENTS_X, y="decision_ms_p90:Q", color=SERIES,
            fill=alt.Fill("series:N", legend=None), fillOpacity=hollow, tooltip=_AGENTS_TIPS),
        base.mark_rule(strokeDash=[6, 4], strokeWidth=1.5).encode(y="slo_ms:Q", color=SERIES),
    )
    return ChartSpec(
        id="agents_decision",
        title="Step decision time (p90) against concurrent agents, with the SLO",
        caption=("Workloads with load levels, the newest filtered result per endpoint and "
                 "workload: each level's p90 decision time (request sent to the last tool-call "
                 "argument byte; tool time excluded), the workload's SLO as a dashed rule. "
                 "The dotted lines only join measured levels."),
        source="agentic", reduce="load_levels", fields=("agents", "decision_ms_p90"),
        spec=_finish(chart), alt_columns=list(_AGENTS_ALT),
    )


_DAY_AXIS = alt.Axis(
    format="%Y-%m-%d",
    # ticks a day apart at least (Vega lowers its tick count to the days the domain spans); a
    # domain shorter than about a day and a half still gets ticks hours apart, and of those only
    # the first and any at midnight are labelled, so no date is written twice
    tickMinStep=86_400_000,
    labelExpr="datum.index === 0 || (hours(datum.value) === 0 && minutes(datum.value) === 0)"
              " ? datum.label : ''",
)
"""The run-date axis: each date written once, however few days the results span."""


def history_chart() -> ChartSpec:
    """One metric over time per endpoint (the metric is chosen on the page)."""
    chart = _base().mark_line(point=True).encode(
        # padding: the first and last run dates are not drawn on the plot's edges
        # `at`: the run date, with marks of one day spread over it (lib/reducers.js history_metric)
        x=alt.X("at:T", title="run date", axis=_DAY_AXIS, scale=alt.Scale(padding=14)),
        y=alt.Y("value:Q", title="value of the chosen metric"),
        color=SERIES,
        order=alt.Order("at:T"),
        tooltip=["series:N", "date:N", "metric:N", "value:Q", "tier:N", "run_id:N"],
    )
    return ChartSpec(
        id="history",
        title="A metric over time",
        caption=(
            "Every filtered result as one point per run date, per endpoint and workload (points "
            "of one day are spread across it so that each shows); the "
            "metric is chosen above the chart. Results of another provenance tier than the "
            "scheduled benchmark's (attested) draw their own line, named with their tier; "
            "self-reported ones only when you include them."
        ),
        source="history",
        reduce="history_metric",
        fields=("at", "value"),
        spec=_finish(chart),
        alt_columns=[("series", "endpoint · workload"), ("date", "date"),
                     ("metric", "metric"), ("value", "value"), ("tier", "provenance"),
                     ("run_id", "run")],
    )


def buyer_chart() -> dict[str, Any]:
    """A copy of `_buyer_chart()`, made once per process (altair builds and validates a spec in
    tens of milliseconds, and the home, compare and every workload page carry this one)."""
    return copy.deepcopy(_buyer_chart())


@functools.cache
def _buyer_chart() -> dict[str, Any]:
    """The home and compare pages' chart: each endpoint's frontier (its newest result's
    non-dominated points, `on_pareto`) as a step, its other points faint, the point chosen at
    the reader's target ringed, and a per-user speed target as a vertical rule."""
    base = _base()
    frontier = base.transform_filter("datum.kind === 'point' && datum.frontier").mark_line(
        interpolate="step-before", strokeWidth=2
    ).encode(
        x=alt.X("tps_per_user:Q", title="per-user speed (output tokens/s per user)"),
        y=alt.Y("system_tps:Q", title="system throughput (output tokens/s)"),
        color=alt.Color("series:N", title="endpoint"),
        order=alt.Order("tps_per_user:Q"),
    )
    points = base.transform_filter("datum.kind === 'point'").mark_point(
        filled=True, size=45
    ).encode(
        x="tps_per_user:Q", y="system_tps:Q", color=alt.Color("series:N", title="endpoint"),
        opacity=alt.condition("datum.frontier", alt.value(1.0), alt.value(0.3)),
        tooltip=["series:N", "point:N", "tps_per_user:Q", "system_tps:Q", "ttft_ms_p90:Q",
                 "usd_per_mtok_output:Q", "run_id:N"],
    )
    chosen = base.transform_filter("datum.kind === 'point' && datum.chosen").mark_point(
        size=260, strokeWidth=2.5, filled=False
    ).encode(x="tps_per_user:Q", y="system_tps:Q", color=alt.Color("series:N", title="endpoint"))
    rule = base.transform_filter("datum.kind === 'target'").mark_rule(
        strokeDash=[6, 4], strokeWidth=1.5, color="#888"
    ).encode(x="tps_per_user:Q", tooltip=[alt.Tooltip("label:N", title="target")])
    return _finish(alt.layer(rule, frontier, points, chosen))


def capacity_chart() -> dict[str, Any]:
    """A copy of `_capacity_chart()` (the endpoint and compare pages each carry one)."""
    return copy.deepcopy(_capacity_chart())


@functools.cache
def _capacity_chart() -> dict[str, Any]:
    """Agents under load (epbench.generator.capacity_view fills `rows`, one per result and
    level): task success with its 95% interval, and step decision p90 with the workload's SLO
    as a dashed rule, both against concurrent agents (log scale: levels grow by factors); a
    hollow mark is a level past the SLO. No line between levels is a measurement."""
    x = alt.X("agents:Q", title="concurrent agents", scale=alt.Scale(type="log", base=2),
              axis=alt.Axis(values=[1, 2, 4, 8, 16, 32, 64]))
    color = alt.Color("series:N", title="endpoint · workload")
    filled = alt.condition("datum.at_slo", alt.value(1.0), alt.value(0.0))
    tips = ["series:N", "agents:Q", "success_rate:Q", "success_ci_low:Q", "success_ci_high:Q",
            "decision_ms_p90:Q", "slo_ms:Q", "at_slo:N", "run_id:N"]
    base = _base()
    success = alt.layer(
        base.mark_rule(strokeWidth=2).encode(
            x=x, y=alt.Y("success_ci_low:Q", title="task success",
                         scale=alt.Scale(domain=[0, 1]), axis=alt.Axis(format="%")),
            y2="success_ci_high:Q", color=color),
        base.mark_line(strokeWidth=1, strokeDash=[2, 2]).encode(
            x=x, y="success_rate:Q", color=color, order="agents:Q"),
        base.mark_point(size=80, strokeWidth=2).encode(
            x=x, y="success_rate:Q", color=color, fillOpacity=filled,
            fill=alt.Fill("series:N", legend=None), tooltip=tips),
    ).properties(height=220)
    decision = alt.layer(
        base.mark_line(strokeWidth=1, strokeDash=[2, 2]).encode(
            x=x, y=alt.Y("decision_ms_p90:Q", title="step decision p90 (ms)"), color=color,
            order="agents:Q"),
        base.mark_point(size=80, strokeWidth=2).encode(
            x=x, y="decision_ms_p90:Q", color=color, fillOpacity=filled,
            fill=alt.Fill("series:N", legend=None), tooltip=tips),
        base.mark_rule(strokeDash=[6, 4], strokeWidth=1.5).encode(
            y="slo_ms:Q", color=color,
            tooltip=[alt.Tooltip("series:N"), alt.Tooltip("slo_ms:Q", title="SLO (ms)")]),
    ).properties(height=220)
    spec: dict[str, Any] = alt.vconcat(success, decision).to_dict()
    spec.pop("$schema", None)
    spec.setdefault("config", {})["legend"] = {"symbolLimit": 24, "labelLimit": 280}
    return spec


def charts_for(page: str) -> list[ChartSpec]:
    """The charts of one leaderboard page (a copy of specs built once per process: every
    endpoint and workload page carries a board's charts too)."""
    return copy.deepcopy(list(_charts_for(page)))


@functools.cache
def _charts_for(page: str) -> tuple[ChartSpec, ...]:
    return tuple(_charts_of(page))


def _charts_of(page: str) -> list[ChartSpec]:
    if page == "serving":
        return [pareto_chart(), ttft_chart(), cost_chart()]
    if page == "agentic":
        return [success_chart(), retry_chart(), usd_per_success_chart(),
                agents_success_chart(), agents_decision_chart()]
    if page == "cost":
        return [cost_chart(), usd_per_success_chart()]
    if page == "history":
        return [history_chart()]
    raise KeyError(page)
