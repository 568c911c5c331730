/** @module Markdown table rendering for benchmark output. */

/** Renders a markdown table; `align` holds 'l' or 'r' per column (default: right). */
export function table(headers: string[], rows: string[][], align?: ('l' | 'r')[]): string {
  const sep = headers.map((_, i) => ((align?.[i] ?? 'r') === 'l' ? '---' : '--:'));
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  return [line(headers), line(sep), ...rows.map(line)].join('\n');
}
