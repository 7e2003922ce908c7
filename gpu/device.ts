/**
 * The WebGPU device through npm `webgpu` (Dawn's Node binding).
 *
 * dawn.node frees its instance when the object returned by create() is garbage-collected,
 * even while it still polls events (the process then dies in InstanceBase::ProcessEvents with
 * futex/pthread errors). Dropping it even after device.destroy() crashed here when a second
 * build opened a new instance (pending map callbacks of the old one), so the instance lives in
 * a module-level holder for the whole process and is reused by every openGpu(); only devices
 * come and go. A process holding it still exits normally.
 */
import { labelNewThreads } from '../runtime/cpu-time.js';
import { captureStderr, splitDawnLines, writeStderr } from '../runtime/native-stderr.js';

export interface GpuLimits {
  maxStorageBufferBindingSize: number;
  maxBufferSize: number;
  maxComputeWorkgroupStorageSize: number;
  maxComputeInvocationsPerWorkgroup: number;
  maxComputeWorkgroupSizeX: number;
  maxComputeWorkgroupsPerDimension: number;
  minUniformBufferOffsetAlignment: number;
}

export interface GpuContext {
  device: GPUDevice;
  adapterInfo: { vendor: string; architecture: string; device: string; description: string };
  limits: GpuLimits;
  features: string[];
  hasTimestamps: boolean;
  hasSubgroups: boolean;
  /** Set when the device was lost or reported an uncaptured error. */
  fault?: string;
  /** Dawn's notices taken off stderr (see openGpu); undefined where stderr could not be redirected. */
  dawnMessages?: string[];
}

/**
 * Module-level holder: keeps the GPU instance alive as long as a device is open (see above).
 * `enumerated`: the instance has listed its adapters once (Dawn prints its notices then);
 * `dawnMessages`: those notices, where they could be taken off stderr.
 */
const holder: { gpu?: GPU; context?: GpuContext; users: number; enumerated?: boolean; dawnMessages?: string[] } = { users: 0 };

const LIMIT_NAMES: (keyof GpuLimits)[] = [
  'maxStorageBufferBindingSize',
  'maxBufferSize',
  'maxComputeWorkgroupStorageSize',
  'maxComputeInvocationsPerWorkgroup',
  'maxComputeWorkgroupSizeX',
  'maxComputeWorkgroupsPerDimension',
  'minUniformBufferOffsetAlignment',
];

export interface OpenGpuOptions {
  /** Called once when the device is lost or reports an uncaptured error. */
  onFault?: (message: string) => void;
  /** Refuse a CPU-emulated adapter (lavapipe, SwiftShader) before creating a device on it. */
  rejectSoftware?: boolean;
  /**
   * Required limits in place of the adapter's own values (which openGpu otherwise asks for in
   * full). A test hook: a value beyond what the adapter offers makes requestDevice refuse, as a
   * driver that cannot honour the limits it reports would, and openGpu returns the reason.
   * See also testHook().
   */
  requiredLimits?: Record<string, number>;
}

/** What the test hook may set: the limits above, and a software adapter counted as hardware. */
interface GpuTestHook {
  requiredLimits?: Record<string, number>;
  acceptSoftware?: boolean;
}

/**
 * Test hook for builds in a child process (the CLI), which cannot pass OpenGpuOptions:
 * GPUINDEX_TEST_GPU='{"requiredLimits":{"maxComputeInvocationsPerWorkgroup":1025},"acceptSoftware":true}'.
 * acceptSoftware lets lavapipe stand in for a hardware GPU, so `--sorter auto` goes on to
 * request the device instead of declining the adapter. Unset (always, outside tests): nothing.
 */
function testHook(): GpuTestHook {
  const raw = process.env.GPUINDEX_TEST_GPU;
  if (!raw) return {};
  try {
    return JSON.parse(raw) as GpuTestHook;
  } catch {
    return {};
  }
}

/** Dawn's messages span lines ("...\n - While validating ..."): the reason must be one line. */
const oneLine = (message: string): string =>
  message
    .split('\n')
    .map((l) => l.replace(/^\s*-\s*/, '').replace(/\.\s*$/, '').trim())
    .filter(Boolean)
    .join('; ');

/** The first of `required` that `limits` does not meet, as a reason; undefined when all are met. */
function unmetLimit(limits: Record<string, number>, required: Record<string, number>): string | undefined {
  for (const [name, want] of Object.entries(required)) {
    const have = limits[name];
    // min* limits (alignments) are better when smaller; the rest when larger.
    const worse = have === undefined || (name.startsWith('min') ? want < have : want > have);
    if (worse) return `${name}: ${want} requested, ${have ?? 'none'} offered`;
  }
  return undefined;
}

/** A CPU-emulated adapter (Mesa's lavapipe/llvmpipe, SwiftShader): slower than the CPU sorter. */
export function isSoftwareAdapter(info: { architecture: string; device: string; description: string }): boolean {
  return /llvmpipe|lavapipe|swiftshader|software/i.test(`${info.architecture} ${info.device} ${info.description}`);
}

/** Opens (or shares) the device; returns the context or why there is none. */
export async function openGpu(options: OpenGpuOptions = {}): Promise<GpuContext | string> {
  const hook = testHook();
  const extraLimits = { ...hook.requiredLimits, ...options.requiredLimits };
  const rejectSoftware = options.rejectSoftware && !hook.acceptSoftware;
  if (holder.context && !holder.context.fault) {
    if (rejectSoftware && isSoftwareAdapter(holder.context.adapterInfo)) return `only a software adapter (${holder.context.adapterInfo.device}), slower than the CPU sorter`;
    // The shared device was created with the adapter's limits: it serves only what it has.
    const unmet = unmetLimit(holder.context.device.limits as unknown as Record<string, number>, extraLimits);
    if (unmet) return `the open GPU device lacks a requested limit (${unmet})`;
    holder.users++;
    return holder.context;
  }
  // Threads born so far are not the GPU's: charge them before Dawn starts its own.
  labelNewThreads('runtime');
  if (!holder.gpu) {
    let dawn: typeof import('webgpu');
    try {
      // Loaded on first use: a CPU-only build never pays for Dawn's native module (about 30 ms).
      dawn = await import('webgpu');
    } catch (err) {
      return `cannot load Dawn (${(err as Error).message})`;
    }
    const { create, globals } = dawn;
    Object.assign(globalThis, globals);
    try {
      // Timestamp quantization off, so kernel timings have full resolution.
      holder.gpu = create(['disable-dawn-features=timestamp_quantization']);
    } catch (err) {
      return `cannot load Dawn (${(err as Error).message})`;
    }
  }
  const adapter = await requestAdapter(holder.gpu);
  if (!adapter) return 'no WebGPU adapter found';
  if (rejectSoftware && isSoftwareAdapter(adapter.info)) return `only a software adapter (${adapter.info.device || adapter.info.description}), slower than the CPU sorter`;
  const features = [...adapter.features] as string[];
  const requiredFeatures = (['timestamp-query', 'subgroups'] as const).filter((f) => adapter.features.has(f));
  const requiredLimits: Record<string, number> = {};
  for (const name of LIMIT_NAMES) if (name !== 'minUniformBufferOffsetAlignment') requiredLimits[name] = (adapter.limits as unknown as Record<string, number>)[name]!;
  Object.assign(requiredLimits, extraLimits);
  let device: GPUDevice;
  try {
    device = await adapter.requestDevice({ requiredFeatures: requiredFeatures as GPUFeatureName[], requiredLimits });
  } catch (err) {
    return `the adapter refused the device (${oneLine(String((err as Error)?.message ?? err))})`;
  }
  const info = adapter.info;
  const limits = Object.fromEntries(LIMIT_NAMES.map((n) => [n, (device.limits as unknown as Record<string, number>)[n]!])) as unknown as GpuLimits;
  const context: GpuContext = {
    device,
    adapterInfo: { vendor: info.vendor, architecture: info.architecture, device: info.device, description: info.description },
    limits,
    features,
    hasTimestamps: device.features.has('timestamp-query'),
    hasSubgroups: device.features.has('subgroups'),
    ...(holder.dawnMessages ? { dawnMessages: holder.dawnMessages } : {}),
  };
  const fault = (message: string) => {
    if (context.fault) return;
    context.fault = message;
    options.onFault?.(message);
  };
  device.lost.then((l) => {
    // A device destroyed by closeGpu() is no fault; any other loss (driver reset, a test hook
    // destroying it mid-build) is, and the context is never handed out again.
    if (holder.context === context) holder.context = undefined;
    if (l.reason !== 'destroyed') fault(`GPU device lost: ${l.message || l.reason}`);
    else context.fault ??= 'GPU device destroyed';
  });
  device.onuncapturederror = (e) => fault(`GPU error: ${(e as GPUUncapturedErrorEvent).error.message}`);
  labelNewThreads('gpu');
  holder.context = context;
  holder.users = 1;
  return context;
}

/**
 * The adapter. On an instance's first request Dawn lists the adapters and prints notices with
 * fprintf(stderr) inside the call (on lavapipe and some NVIDIA drivers: "Warning:
 * maxDynamicUniformBuffersPerPipelineLayout artificially reduced from 1000000 to 16 …"), which
 * no option reaches: they are captured (runtime/native-stderr.ts), kept for `gpu-info --json`,
 * and shown only with GPUINDEX_DEBUG; anything else written meanwhile goes to stderr as it was.
 */
function requestAdapter(gpu: GPU): Promise<GPUAdapter | null> {
  const request = () => gpu.requestAdapter({ powerPreference: 'high-performance' });
  if (holder.enumerated) return request();
  holder.enumerated = true;
  const { value, text } = captureStderr(request);
  if (text !== undefined) {
    const { dawn, other } = splitDawnLines(text);
    holder.dawnMessages = dawn;
    writeStderr(other);
    if (process.env.GPUINDEX_DEBUG) writeStderr(dawn.map((l) => `gpuindex: Dawn: ${l}\n`).join(''));
  }
  return value;
}

/** Releases one user of the device; the last one destroys it (the instance stays, see above). */
export function closeGpu(): void {
  if (holder.users > 0) holder.users--;
  if (holder.users > 0 || !holder.context) return;
  holder.context.device.destroy();
  holder.context = undefined;
}

/** `gpuindex gpu-info`: the adapter, its limits and features, or why there is none. */
export async function gpuInfo(): Promise<Record<string, unknown>> {
  const ctx = await openGpu();
  // Dawn's notices on listing the adapters, where they could be taken off stderr.
  const dawn = holder.dawnMessages ? { dawnMessages: holder.dawnMessages } : {};
  if (typeof ctx === 'string') return { available: false, reason: ctx, ...dawn };
  try {
    return { available: true, adapter: ctx.adapterInfo, limits: ctx.limits, features: ctx.features, timestamps: ctx.hasTimestamps, subgroups: ctx.hasSubgroups, ...dawn };
  } finally {
    closeGpu();
  }
}
