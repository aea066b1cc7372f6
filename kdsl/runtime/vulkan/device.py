"""Vulkan instance, physical-device choice, logical device and compute queue.

One :class:`Device` per process (created on first use, destroyed at exit by
:func:`shutdown`, registered with ``atexit``). The physical device is the
first one with a compute queue, or the one named by ``KDSL_VULKAN_DEVICE``
(an index into the enumeration, or a case-insensitive substring of the
device name). The device features kdsl's shaders use are queried once and
turned into a :class:`~kdsl.codegen.spirv.Target`; the logical device enables
exactly the ones present.
"""

from __future__ import annotations

import atexit
import itertools
import os
import threading
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import vulkan as vk

from kdsl.codegen.spirv import Target
from kdsl.errors import BackendUnavailableError

INSTALL_HINT = "install Debian mesa-vulkan-drivers libvulkan1 (lavapipe) or a GPU driver"
ENV_DEVICE = "KDSL_VULKAN_DEVICE"
ffi = vk.ffi


@dataclass(frozen=True)
class DeviceInfo:
    name: str
    api_version: tuple[int, int]
    driver_version: int
    vendor_id: int
    device_id: int
    timestamp_period: float
    max_group_count: tuple[int, int, int]
    max_group_size: int
    max_shared: int
    max_push: int


def _chain(*structs: Any) -> Any:
    for a, b in itertools.pairwise(structs):
        a.pNext = b
    return structs[0]


def _new(ctype: str, stype: int) -> Any:
    s = ffi.new(ctype + "*")
    s.sType = stype
    return s


class Features:
    """The feature structs kdsl cares about, queried from (or enabled on) a device."""

    def __init__(self) -> None:
        self.f2 = _new("VkPhysicalDeviceFeatures2", vk.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2)
        self.f11 = _new("VkPhysicalDeviceVulkan11Features", vk.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES)
        self.f12 = _new("VkPhysicalDeviceVulkan12Features", vk.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES)
        self.af = _new("VkPhysicalDeviceShaderAtomicFloatFeaturesEXT",
                       vk.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_FEATURES_EXT)
        _chain(self.f2, self.f11, self.f12)

    def with_atomic_float(self) -> None:
        self.f12.pNext = self.af

    def target(self, info: DeviceInfo) -> Target:
        f, f11, f12, af = self.f2.features, self.f11, self.f12, self.af
        version = (1, 6) if info.api_version >= (1, 3) else (1, 5) if info.api_version >= (1, 2) else (1, 3)
        return Target(
            spirv_version=min(version, (1, 5)),  # 1.5 is what spirv-val checks as vulkan1.2; enough for us
            shader_float64=bool(f.shaderFloat64),
            shader_float16=bool(f12.shaderFloat16),
            shader_int8=bool(f12.shaderInt8),
            shader_int16=bool(f.shaderInt16),
            shader_int64=bool(f.shaderInt64),
            storage_buffer_8bit=bool(f12.storageBuffer8BitAccess),
            storage_buffer_16bit=bool(f11.storageBuffer16BitAccess),
            buffer_device_address=bool(f12.bufferDeviceAddress),
            int64_atomics=bool(f12.shaderBufferInt64Atomics),
            float32_atomic_add=bool(af.shaderBufferFloat32AtomicAdd),
            float64_atomic_add=bool(af.shaderBufferFloat64AtomicAdd),
            max_push_constants=info.max_push,
            max_workgroup_size=info.max_group_size,
            max_shared_memory=info.max_shared,
        )


LLVMPIPE_LOOP_LIMIT = 65535  # Mesa gallivm's LP_MAX_TGSI_LOOP_ITERATIONS


@dataclass(frozen=True)
class DriverInfo:
    """What ``VkPhysicalDeviceVulkan12Properties`` says about the driver (codegen facts)."""

    driver_id: int
    description: str  # e.g. "llvmpipe, Mesa 22.3.6 (LLVM 15.0.6)"
    preserve_float: tuple[bool, bool, bool]

    @property
    def loop_limit(self) -> int:
        """Loop passes one shader invocation may make (0: no cap).

        WHY: llvmpipe/lavapipe guards against endless shader loops with one
        counter per invocation (per SIMD group of invocations) that every pass
        of every loop decrements from 65535; at 0 the loop is left silently.
        The emitter then checks each loop's exit (``Target.max_loop_iterations``).
        """
        return LLVMPIPE_LOOP_LIMIT if self.driver_id == vk.VK_DRIVER_ID_MESA_LLVMPIPE else 0

    @property
    def params_binding(self) -> str:
        """"uniform" where pushing constants leaks host memory per dispatch (lavapipe), else "push"."""
        return "uniform" if self.driver_id == vk.VK_DRIVER_ID_MESA_LLVMPIPE else "push"


def _driver_info(phys: Any, device_name: str) -> DriverInfo:
    p12 = _new("VkPhysicalDeviceVulkan12Properties", vk.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_PROPERTIES)
    p2 = _new("VkPhysicalDeviceProperties2", vk.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2)
    p2.pNext = p12
    vk.vkGetPhysicalDeviceProperties2(phys, p2)
    driver_id = int(p12.driverID)
    if driver_id == 0 and "llvmpipe" in device_name.lower():  # a loader that does not fill driverID
        driver_id = vk.VK_DRIVER_ID_MESA_LLVMPIPE
    name, info = ffi.string(p12.driverName).decode(), ffi.string(p12.driverInfo).decode()
    return DriverInfo(
        driver_id=driver_id,
        description=f"{name or device_name}, {info}" if info else (name or device_name),
        preserve_float=(bool(p12.shaderSignedZeroInfNanPreserveFloat16),
                        bool(p12.shaderSignedZeroInfNanPreserveFloat32),
                        bool(p12.shaderSignedZeroInfNanPreserveFloat64)),
    )


def _create_instance() -> Any:
    app = vk.VkApplicationInfo(pApplicationName="kdsl", applicationVersion=1, pEngineName="kdsl",
                               engineVersion=1, apiVersion=vk.VK_MAKE_VERSION(1, 2, 0))
    return vk.vkCreateInstance(vk.VkInstanceCreateInfo(pApplicationInfo=app), None)


def _compute_family(phys: Any) -> int:
    for i, q in enumerate(vk.vkGetPhysicalDeviceQueueFamilyProperties(phys)):
        if q.queueFlags & vk.VK_QUEUE_COMPUTE_BIT:
            return i
    return -1


def _info(phys: Any) -> DeviceInfo:
    p = vk.vkGetPhysicalDeviceProperties(phys)
    lim = p.limits
    return DeviceInfo(
        name=str(p.deviceName),
        api_version=(p.apiVersion >> 22, (p.apiVersion >> 12) & 0x3FF),
        driver_version=int(p.driverVersion),
        vendor_id=int(p.vendorID),
        device_id=int(p.deviceID),
        timestamp_period=float(lim.timestampPeriod),
        max_group_count=tuple(int(lim.maxComputeWorkGroupCount[i]) for i in range(3)),  # type: ignore[arg-type]
        max_group_size=int(lim.maxComputeWorkGroupSize[0]),
        max_shared=int(lim.maxComputeSharedMemorySize),
        max_push=int(lim.maxPushConstantsSize),
    )


def _pick(devices: list[Any]) -> Any:
    usable = [d for d in devices if _compute_family(d) >= 0 and _info(d).api_version >= (1, 2)]
    if not usable:
        raise BackendUnavailableError(f"no Vulkan 1.2 device with a compute queue: {INSTALL_HINT}")
    want = os.environ.get(ENV_DEVICE, "").strip()
    if not want:
        return usable[0]
    if want.isdigit():
        if int(want) >= len(usable):
            raise BackendUnavailableError(f"{ENV_DEVICE}={want}: only {len(usable)} Vulkan device(s)")
        return usable[int(want)]
    for d in usable:
        if want.lower() in _info(d).name.lower():
            return d
    names = ", ".join(_info(d).name for d in usable)
    raise BackendUnavailableError(f"{ENV_DEVICE}={want!r} matches no Vulkan device (have: {names})")


class Device:
    """The logical device, its compute queue and everything created on it."""

    def __init__(self) -> None:
        self.instance = _create_instance()
        try:
            self.physical = _pick(vk.vkEnumeratePhysicalDevices(self.instance))
        except BaseException:
            vk.vkDestroyInstance(self.instance, None)
            raise
        self.info = _info(self.physical)
        self.family = _compute_family(self.physical)
        exts = {e.extensionName for e in vk.vkEnumerateDeviceExtensionProperties(self.physical, None)}
        feats = Features()
        if "VK_EXT_shader_atomic_float" in exts:
            feats.with_atomic_float()
        vk.vkGetPhysicalDeviceFeatures2(self.physical, feats.f2)
        self.target = feats.target(self.info)
        self.driver = _driver_info(self.physical, self.info.name)
        self.target.preserve_float = self.driver.preserve_float
        self.target.max_loop_iterations = self.driver.loop_limit
        self.target.params_binding = self.driver.params_binding
        enabled_exts = ["VK_EXT_shader_atomic_float"] if "VK_EXT_shader_atomic_float" in exts else []
        queue_info = vk.VkDeviceQueueCreateInfo(queueFamilyIndex=self.family, queueCount=1, pQueuePriorities=[1.0])
        queue_info.queueFamilyIndex = self.family  # the package drops zero-valued fields
        queue_info.queueCount = 1
        ci = vk.VkDeviceCreateInfo(pQueueCreateInfos=[queue_info], ppEnabledExtensionNames=enabled_exts)
        ci.queueCreateInfoCount = 1
        ci.pNext = feats.f2  # enable exactly what the device reports
        self.device = vk.vkCreateDevice(self.physical, ci, None)
        self.queue = vk.vkGetDeviceQueue(self.device, self.family, 0)
        self.lock = threading.Lock()
        self._fns: dict[str, Any] = {}
        self.closers: list[Any] = []  # callables run (last first) before the device is destroyed
        self.pending: list[Callable[[], bool]] = []  # each: True while timed-out work still runs
        self.alive = True
        self.lost = False  # VK_ERROR_DEVICE_LOST seen: replaced at the next get_device()

    def fn(self, name: str) -> Any:
        """A device-level function pointer the package does not bind statically."""
        if name not in self._fns:
            self._fns[name] = vk.vkGetDeviceProcAddr(self.device, name)
        return self._fns[name]

    def close(self) -> None:
        if not self.alive:
            return
        self.alive = False
        if not self.lost and any(still() for still in self.pending):
            # a timed-out kernel is still running: destroying what it uses is undefined behaviour
            warnings.warn("kdsl vulkan: a timed-out kernel is still running; its device is left alive",
                          RuntimeWarning, stacklevel=2)
            return
        if not self.lost:
            vk.vkDeviceWaitIdle(self.device)
        for closer in reversed(self.closers):
            closer()
        self.closers.clear()
        vk.vkDestroyDevice(self.device, None)
        vk.vkDestroyInstance(self.instance, None)


_DEVICE: list[Device] = []  # cache: the process's device (at most one)
_LOCK = threading.Lock()


def get_device() -> Device:
    with _LOCK:
        if _DEVICE and _DEVICE[0].lost:
            _DEVICE.pop().close()
        if not _DEVICE:
            try:
                _DEVICE.append(Device())
            except vk.VkError as exc:
                raise BackendUnavailableError(f"cannot create a Vulkan device ({exc!r}): {INSTALL_HINT}") from exc
            atexit.register(shutdown)
        return _DEVICE[0]


def shutdown() -> None:
    """Destroy every Vulkan object kdsl created (also run at interpreter exit)."""
    with _LOCK:
        while _DEVICE:
            _DEVICE.pop().close()


def probe() -> tuple[bool, str]:
    """(usable?, reason) without keeping anything alive."""
    if _DEVICE:
        return True, ""
    try:
        inst = _create_instance()
    except Exception as exc:  # no loader, no ICD: any failure means unavailable
        return False, f"no Vulkan loader or driver ({type(exc).__name__}): {INSTALL_HINT}"
    try:
        devices = vk.vkEnumeratePhysicalDevices(inst)
        _pick(devices)
    except BackendUnavailableError as exc:
        return False, str(exc)
    except Exception as exc:
        return False, f"Vulkan device enumeration failed ({type(exc).__name__}): {INSTALL_HINT}"
    finally:
        vk.vkDestroyInstance(inst, None)
    return True, ""
