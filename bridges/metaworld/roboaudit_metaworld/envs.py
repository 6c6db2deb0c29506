"""Meta-World environments as the bridge uses them: goal-observable `*-v3` tasks, seeded or
explicit object placement, sparse "ever succeeded" success, headless rendering and full state
save/restore.

Facts this module relies on (measured with metaworld 3.1.1 / mujoco 3.3.0):
- seeded placement needs `_freeze_rand_vec = False` and `seeded_rand_vec = True` before
  `seed()` / `reset()`; an explicit placement is a frozen `_last_rand_vec` (object xyz, goal xyz);
- the corner cameras render upside down: frames are flipped vertically here;
- with shadows, reflections and multisampling off, 128×128 frames render at ~100 frames/s on
  Mesa's software EGL (`MUJOCO_GL=egl`);
- `mj_getState` / `mj_setState` with `mjSTATE_INTEGRATION` restore everything, mocap included.
"""

from __future__ import annotations

import atexit
import os
import warnings
import weakref
from dataclasses import dataclass
from typing import Any

os.environ.setdefault("MUJOCO_GL", "egl")

import mujoco  # noqa: E402
import numpy as np  # noqa: E402
from metaworld.env_dict import ALL_V3_ENVIRONMENTS  # noqa: E402
from metaworld.policies import (  # noqa: E402
    SawyerPickPlaceV3Policy,
    SawyerPushV3Policy,
)

# The scripted experts' gain of 10 trips Meta-World's "Constant(s) may be too high" warning on
# every call; the bridge clips actions to the box itself.
warnings.filterwarnings("ignore", message="Constant", category=UserWarning)

#: Minimal object–goal distance in the xy plane that Meta-World's `reset_model` enforces (m).
MIN_OBJECT_GOAL_XY = 0.15

#: Camera of every rendered frame (a corner view of the table; rendered upside down by MuJoCo).
CAMERA = "corner"


@dataclass(frozen=True)
class TaskSpec:
    """One Meta-World task the bridge drives."""

    #: Short name used on the command line and in ids (`push`, `pick-place`).
    name: str
    #: Meta-World environment name (ends in `-v3`).
    env_name: str
    #: Instruction written to the dataset's `meta/tasks.parquet`.
    instruction: str
    #: The scripted expert (`Sawyer*V3Policy`).
    policy_cls: type


TASKS: dict[str, TaskSpec] = {
    "push": TaskSpec(
        "push", "push-v3", "push the puck to the goal", SawyerPushV3Policy
    ),
    "pick-place": TaskSpec(
        "pick-place",
        "pick-place-v3",
        "pick up the puck and place it at the goal",
        SawyerPickPlaceV3Policy,
    ),
}


def task_spec(name: str) -> TaskSpec:
    """The task named `name`; raises `ValueError` naming the known tasks otherwise."""
    try:
        return TASKS[name]
    except KeyError:
        raise ValueError(
            f"unknown task {name!r}; known: {', '.join(sorted(TASKS))}"
        ) from None


def _make_env(spec: TaskSpec) -> Any:
    env = ALL_V3_ENVIRONMENTS[spec.env_name]()
    # Goal-observable: the scripted experts read the goal from the last three observation values.
    env._partially_observable = False
    try:
        del env.sawyer_observation_space  # cached with the old observability
    except AttributeError:
        pass
    env._set_task_called = True
    env._freeze_rand_vec = False
    env.seeded_rand_vec = True
    return env


_LIVE: weakref.WeakSet = weakref.WeakSet()
_CLOSE_REGISTERED = False


def _close_renderers() -> None:
    # Renderers freed during interpreter teardown raise EGL errors from their destructors.
    for env in list(_LIVE):
        env.close_renderer()


class TaskEnv:
    """One Meta-World task with a fixed horizon, a lazily created offscreen renderer and
    appearance draws.

    `horizon` is the most actions of an episode; Meta-World's own limit (500) is raised above it
    so that it never interrupts an episode.
    """

    def __init__(self, task: str, horizon: int, image_size: int = 64) -> None:
        self.spec = task_spec(task)
        self.env = _make_env(self.spec)
        self.env.max_path_length = max(500, horizon + 1)
        self.horizon = horizon
        self.image_size = image_size
        self.policy = self.spec.policy_cls()
        self._renderer: mujoco.Renderer | None = None
        model = self.env.model
        self._canonical_mat = model.mat_rgba.copy()
        self._canonical_geom = model.geom_rgba.copy()
        self._canonical_light = model.light_diffuse.copy()
        self.obs: np.ndarray = np.zeros(39)
        _LIVE.add(self)

    # --- placement -----------------------------------------------------------------------------
    @property
    def reset_space(self) -> tuple[np.ndarray, np.ndarray]:
        """Bounds of the placement vector (object xyz, goal xyz), in metres."""
        space = self.env._random_reset_space
        return np.array(space.low, dtype=np.float64), np.array(
            space.high, dtype=np.float64
        )

    def reset_seeded(self, seed: int) -> np.ndarray:
        """Resets with Meta-World's own seeded placement; returns the observation (39 values)."""
        self.env._freeze_rand_vec = False
        self.env.seeded_rand_vec = True
        self.env.seed(int(seed))
        obs, _ = self.env.reset()
        self.obs = obs
        return obs

    def reset_placed(self, placement: np.ndarray) -> np.ndarray:
        """Resets with the object and goal at `placement` (object xyz, goal xyz, metres).

        Raises `ValueError` when object and goal are closer than `MIN_OBJECT_GOAL_XY` in the xy
        plane (Meta-World would redraw forever)."""
        placement = np.asarray(placement, dtype=np.float64)
        if np.linalg.norm(placement[:2] - placement[3:5]) < MIN_OBJECT_GOAL_XY:
            raise ValueError(
                f"object and goal closer than {MIN_OBJECT_GOAL_XY} m: {placement.tolist()}"
            )
        self.env._freeze_rand_vec = True
        self.env._last_rand_vec = placement.copy()
        obs, _ = self.env.reset()
        self.obs = obs
        return obs

    @property
    def placement(self) -> np.ndarray:
        """The placement of the present episode (object xyz, goal xyz)."""
        return np.asarray(self.env._last_rand_vec, dtype=np.float64).copy()

    @property
    def object_pos(self) -> np.ndarray:
        """Initial object position of the present episode (m)."""
        return np.asarray(self.env.obj_init_pos, dtype=np.float64).copy()

    @property
    def goal_pos(self) -> np.ndarray:
        """Goal position of the present episode (m)."""
        return np.asarray(self.env._target_pos, dtype=np.float64).copy()

    # --- acting --------------------------------------------------------------------------------
    def expert_action(self, obs: np.ndarray) -> np.ndarray:
        """The scripted expert's action at `obs`, clipped to the action box [-1, 1]^4."""
        return np.clip(
            np.asarray(self.policy.get_action(obs), dtype=np.float64), -1.0, 1.0
        )

    def step(self, action: np.ndarray) -> tuple[np.ndarray, bool]:
        """Applies `action` (clipped to [-1, 1]^4); returns the next observation and whether the
        task's success criterion holds after it."""
        a = np.clip(np.asarray(action, dtype=np.float64), -1.0, 1.0)
        obs, _r, _term, _trunc, info = self.env.step(a.astype(np.float32))
        self.obs = obs
        return obs, bool(info["success"])

    @property
    def mocap_pos(self) -> np.ndarray:
        """Commanded end-effector (mocap) position (m)."""
        return self.env.data.mocap_pos[0].copy()

    @property
    def action_scale(self) -> float:
        """Metres of mocap motion per unit of action."""
        return float(self.env.action_scale)

    # --- state ---------------------------------------------------------------------------------
    def get_state(self) -> dict:
        """The full state: MuJoCo's integration state (time, qpos, qvel, act, warm start, mocap,
        ...) from `mj_getState`, plus Meta-World's Python-side frame stack and step count."""
        m, d = self.env.model, self.env.data
        spec = mujoco.mjtState.mjSTATE_INTEGRATION
        mj = np.empty(mujoco.mj_stateSize(m, spec))
        mujoco.mj_getState(m, d, mj, spec)
        return {
            "mj": mj,
            "prev_obs": np.array(self.env._prev_obs, copy=True),
            "path_length": int(self.env.curr_path_length),
            "obs": self.obs.copy(),
        }

    def set_state(self, state: dict) -> np.ndarray:
        """Restores a state from `get_state`; returns its observation. No `mj_forward` here: it
        would change the solver's warm start slightly, and the next step recomputes everything
        anyway (bit-identical continuation, tested)."""
        m, d = self.env.model, self.env.data
        mujoco.mj_setState(m, d, state["mj"], mujoco.mjtState.mjSTATE_INTEGRATION)
        self.env._prev_obs = state["prev_obs"].copy()
        self.env.curr_path_length = state["path_length"]
        self.obs = state["obs"].copy()
        return self.obs

    # --- appearance and rendering -------------------------------------------------------------
    def set_appearance(self, draw: int, seed: int) -> None:
        """Appearance draw `draw` (0: canonical): table, floor and puck colours and light
        intensity drawn from `(seed, draw)`. Rendering only: physics does not read colours."""
        from .rng import generator

        m = self.env.model
        m.mat_rgba[:] = self._canonical_mat
        m.geom_rgba[:] = self._canonical_geom
        m.light_diffuse[:] = self._canonical_light
        if draw == 0:
            return
        g = generator(seed, "appearance", draw)
        for name in ("table_wood", "basic_floor", "table_col"):
            k = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_MATERIAL, name)
            if k >= 0:
                m.mat_rgba[k, :3] = g.uniform(0.25, 1.0, size=3)
        k = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_GEOM, "objGeom")
        if k >= 0:
            m.geom_rgba[k, :3] = g.uniform(0.0, 1.0, size=3)
        m.light_diffuse[:] = self._canonical_light * g.uniform(0.6, 1.2)

    def render(self) -> np.ndarray:
        """An `image_size`² RGB frame (uint8, H×W×3) of the `CAMERA` view, the right way up."""
        if self._renderer is None:
            m = self.env.model
            m.vis.quality.shadowsize = 0
            m.vis.quality.offsamples = 0
            self._renderer = mujoco.Renderer(m, self.image_size, self.image_size)
            global _CLOSE_REGISTERED
            if not _CLOSE_REGISTERED:
                # After MuJoCo's own atexit `eglTerminate` (registered with the first context):
                # atexit runs last-registered first, so renderers are closed before it.
                atexit.register(_close_renderers)
                _CLOSE_REGISTERED = True
            flags = self._renderer.scene.flags
            flags[mujoco.mjtRndFlag.mjRND_SHADOW] = 0
            flags[mujoco.mjtRndFlag.mjRND_REFLECTION] = 0
        self._renderer.update_scene(self.env.data, camera=CAMERA)
        return np.ascontiguousarray(np.flipud(self._renderer.render()))

    def close_renderer(self) -> None:
        """Frees the renderer (a later `render` makes a new one)."""
        if self._renderer is not None:
            self._renderer.close()
            self._renderer = None

    def close(self) -> None:
        """Frees the renderer and the environment."""
        self.close_renderer()
        self.env.close()
