import type { Command } from 'commander';

/** GPU commands (gpu-info, bench-sort); placeholder until GpuSort lands. */
export function registerGpuCommands(_program: Command): void {}
