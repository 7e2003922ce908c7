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
import { create, globals } from 'webgpu';

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
}

/** Module-level holder: keeps the GPU instance alive as long as a device is open (see above). */
const holder: { gpu?: GPU; context?: GpuContext; users: number } = { users: 0 };

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
}

/** A CPU-emulated adapter (Mesa's lavapipe/llvmpipe, SwiftShader): slower than the CPU sorter. */
export function isSoftwareAdapter(info: { architecture: string; device: string; description: string }): boolean {
  return /llvmpipe|lavapipe|swiftshader|software/i.test(`${info.architecture} ${info.device} ${info.description}`);
}

/** Opens (or shares) the device; returns the context or why there is none. */
export async function openGpu(options: OpenGpuOptions = {}): Promise<GpuContext | string> {
  if (holder.context && !holder.context.fault) {
    if (options.rejectSoftware && isSoftwareAdapter(holder.context.adapterInfo)) return `only a software adapter (${holder.context.adapterInfo.device}), slower than the CPU sorter`;
    holder.users++;
    return holder.context;
  }
  if (!holder.gpu) {
    Object.assign(globalThis, globals);
    try {
      // Timestamp quantization off, so kernel timings have full resolution.
      holder.gpu = create(['disable-dawn-features=timestamp_quantization']);
    } catch (err) {
      return `cannot load Dawn (${(err as Error).message})`;
    }
  }
  const adapter = await holder.gpu.requestAdapter({ powerPreference: 'high-performance' });
  if (!adapter) return 'no WebGPU adapter found';
  if (options.rejectSoftware && isSoftwareAdapter(adapter.info)) return `only a software adapter (${adapter.info.device || adapter.info.description}), slower than the CPU sorter`;
  const features = [...adapter.features] as string[];
  const requiredFeatures = (['timestamp-query', 'subgroups'] as const).filter((f) => adapter.features.has(f));
  const requiredLimits: Record<string, number> = {};
  for (const name of LIMIT_NAMES) if (name !== 'minUniformBufferOffsetAlignment') requiredLimits[name] = (adapter.limits as unknown as Record<string, number>)[name]!;
  let device: GPUDevice;
  try {
    device = await adapter.requestDevice({ requiredFeatures: requiredFeatures as GPUFeatureName[], requiredLimits });
  } catch (err) {
    return `the adapter refused the device (${(err as Error).message})`;
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
  holder.context = context;
  holder.users = 1;
  return context;
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
  if (typeof ctx === 'string') return { available: false, reason: ctx };
  try {
    return { available: true, adapter: ctx.adapterInfo, limits: ctx.limits, features: ctx.features, timestamps: ctx.hasTimestamps, subgroups: ctx.hasSubgroups };
  } finally {
    closeGpu();
  }
}
