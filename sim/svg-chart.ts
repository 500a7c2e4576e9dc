// A hand-written SVG line chart of a scenario's series (e.g. the share of nodes that know of a failure
// over time): one polyline per series, labelled axes with ticks, and a legend. No dependencies, and
// the output depends only on the chart data, so it is as reproducible as the JSON report.

import type { Chart } from './scenario.js';
import { roundTo } from './stats.js';

const WIDTH = 720;
const HEIGHT = 400;
const MARGIN = { left: 70, right: 180, top: 40, bottom: 55 };
const TICKS = 5;
/** Colour-blind-safe palette (Okabe–Ito). */
const COLOURS = ['#0072B2', '#D55E00', '#009E73', '#CC79A7', '#E69F00', '#56B4E9', '#F0E442', '#000000'];

function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

function tickLabel(value: number): string {
  return String(roundTo(value, Math.abs(value) >= 10 ? 0 : 2));
}

export function renderSvgChart(chart: Chart): string {
  const plotWidth = WIDTH - MARGIN.left - MARGIN.right;
  const plotHeight = HEIGHT - MARGIN.top - MARGIN.bottom;
  const xMax = Math.max(1e-9, ...chart.series.flatMap((series) => series.points.map(([x]) => x)));
  const yMax = chart.yMax > 0 ? chart.yMax : 1;
  const px = (x: number) => roundTo(MARGIN.left + (x / xMax) * plotWidth, 1);
  const py = (y: number) => roundTo(MARGIN.top + plotHeight - (y / yMax) * plotHeight, 1);
  const bottom = MARGIN.top + plotHeight;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}" font-family="sans-serif" font-size="12">`,
    `<rect width="${WIDTH}" height="${HEIGHT}" fill="#ffffff"/>`,
    `<text x="${WIDTH / 2}" y="22" text-anchor="middle" font-size="15">${escapeXml(chart.title)}</text>`,
    `<line x1="${MARGIN.left}" y1="${bottom}" x2="${MARGIN.left + plotWidth}" y2="${bottom}" stroke="#333"/>`,
    `<line x1="${MARGIN.left}" y1="${MARGIN.top}" x2="${MARGIN.left}" y2="${bottom}" stroke="#333"/>`,
  ];
  for (let i = 0; i <= TICKS; i++) {
    const x = (xMax * i) / TICKS;
    const y = (yMax * i) / TICKS;
    parts.push(
      `<line x1="${px(x)}" y1="${bottom}" x2="${px(x)}" y2="${bottom + 5}" stroke="#333"/>`,
      `<text x="${px(x)}" y="${bottom + 18}" text-anchor="middle">${tickLabel(x)}</text>`,
      `<line x1="${MARGIN.left - 5}" y1="${py(y)}" x2="${MARGIN.left + plotWidth}" y2="${py(y)}" stroke="#ddd"/>`,
      `<text x="${MARGIN.left - 8}" y="${py(y) + 4}" text-anchor="end">${tickLabel(y)}</text>`,
    );
  }
  parts.push(
    `<text x="${MARGIN.left + plotWidth / 2}" y="${HEIGHT - 12}" text-anchor="middle">${escapeXml(chart.xLabel)}</text>`,
    `<text transform="translate(18 ${MARGIN.top + plotHeight / 2}) rotate(-90)" text-anchor="middle">${escapeXml(chart.yLabel)}</text>`,
  );
  chart.series.forEach((series, index) => {
    const colour = COLOURS[index % COLOURS.length] ?? '#000000';
    const points = series.points.map(([x, y]) => `${px(x)},${py(Math.min(y, yMax))}`).join(' ');
    const legendY = MARGIN.top + 10 + index * 20;
    const legendX = MARGIN.left + plotWidth + 15;
    parts.push(
      `<polyline fill="none" stroke="${colour}" stroke-width="2" points="${points}"/>`,
      `<line x1="${legendX}" y1="${legendY}" x2="${legendX + 20}" y2="${legendY}" stroke="${colour}" stroke-width="2"/>`,
      `<text x="${legendX + 26}" y="${legendY + 4}">${escapeXml(series.name)}</text>`,
    );
  });
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}
