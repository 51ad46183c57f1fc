import { readdirSync, readFileSync } from 'node:fs';

/**
 * Pids of live processes whose command line contains `marker` (read from the host's `/proc`, so
 * processes inside a sandbox's pid namespace are found too). Zombies have an empty command line
 * and do not count: they are dead and hold nothing.
 */
export function livingProcesses(marker: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (cmdline.includes(marker)) found.push(Number(entry));
    } catch {
      // The process exited while we looked.
    }
  }
  return found;
}

/** Pids of live, non-zombie processes in process group `pgid`. */
export function livingGroupMembers(pgid: number): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // Fields after the parenthesised command: state, ppid, pgrp, …
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (fields[0] !== 'Z' && Number(fields[2]) === pgid) found.push(Number(entry));
    } catch {
      // The process exited while we looked.
    }
  }
  return found;
}

/** Polls until `probe` returns an empty list or `withinMs` passes; returns the last list. */
export async function untilEmpty(probe: () => number[], withinMs: number): Promise<number[]> {
  const until = Date.now() + withinMs;
  let left = probe();
  while (left.length > 0 && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 50));
    left = probe();
  }
  return left;
}

/** A marker unique to one test, usable as a `sleep` duration so it shows in the command line. */
export function sleepMarker(): string {
  return `300.${String(Math.floor(Math.random() * 1e9)).padStart(9, '0')}`;
}
