//! MJCF generation: one model per (family, layout, appearance). Appearance only changes visual attributes
//! (colours, textures, lights, cameras), never the element structure, so the physics of two appearances of
//! one layout are identical.

use crate::geom::{look_at_xyaxes, quat_from_rpy};
use crate::scene::{Appearance, HingeSide, Scene};
use crate::task::Family;
use std::fmt::Write;

/// Door hinge damping (N·m·s/rad). High enough that the panel stops as soon as the hand stops
/// pushing (no swing by momentum), so a door opens only as far as a push carries it.
pub const DOOR_DAMPING: f64 = 1.0;
/// Initial hand position (world, m); the tool-centre point is [`TCP_OFFSET`] below it.
pub const HAND_HOME: [f64; 3] = [0.45, 0.0, 0.26];
/// Distance from the hand frame to the tool-centre point, along the hand's −z (m).
pub const TCP_OFFSET: f64 = 0.06;
/// Half edge of a block (m).
pub const BLOCK_HALF: f64 = 0.02;
/// Inner half width of a tray (m).
pub const TRAY_INNER_HALF: f64 = 0.061;
/// Finger opening range of each finger joint (m).
pub const FINGER_OPEN: f64 = 0.045;
/// Default scene camera position and look-at point.
pub const CAMERA_POS: [f64; 3] = [1.3, 0.0, 0.9];
/// Default scene camera target.
pub const CAMERA_TARGET: [f64; 3] = [0.45, 0.0, 0.1];

fn rgb(c: [f64; 3]) -> String {
    format!("{:.4} {:.4} {:.4}", c[0], c[1], c[2])
}

fn rgba(c: [f64; 3]) -> String {
    format!("{} 1", rgb(c))
}

fn v3(v: [f64; 3]) -> String {
    format!("{} {} {}", v[0], v[1], v[2])
}

/// Scene camera pose from the appearance: position and `xyaxes`.
fn scene_camera(a: &Appearance) -> ([f64; 3], [f64; 6]) {
    let c = &a.camera;
    let pos = [
        CAMERA_POS[0] + c.offset[0],
        CAMERA_POS[1] + c.offset[1],
        CAMERA_POS[2] + c.offset[2],
    ];
    let d = [
        CAMERA_TARGET[0] - CAMERA_POS[0],
        CAMERA_TARGET[1] - CAMERA_POS[1],
        CAMERA_TARGET[2] - CAMERA_POS[2],
    ];
    let az = d[1].atan2(d[0]) + c.yaw;
    let el = d[2].atan2(d[0].hypot(d[1])) - c.pitch;
    let fwd = [el.cos() * az.cos(), el.cos() * az.sin(), el.sin()];
    let target = [pos[0] + fwd[0], pos[1] + fwd[1], pos[2] + fwd[2]];
    (pos, look_at_xyaxes(pos, target, c.roll))
}

/// Builds the MJCF of `scene` with an offscreen buffer of `render_size` pixels (square).
pub fn build_mjcf(scene: &Scene, render_size: usize) -> String {
    let a = &scene.appearance;
    let l = &scene.layout;
    let fam = scene.family;
    let mut x = String::with_capacity(16_384);
    let off = render_size.max(64);
    let key = a.light_brightness;
    let tint = a.light_tint;
    let (cam_pos, cam_xy) = scene_camera(a);
    let _ = write!(
        x,
        r#"<mujoco model="roboaudit_tabletop">
<compiler angle="radian" autolimits="true"/>
<option timestep="0.002" integrator="implicitfast" cone="elliptic" impratio="10"/>
<visual>
  <global offwidth="{off}" offheight="{off}"/>
  <quality shadowsize="0" offsamples="0" numslices="12" numstacks="6" numquads="1"/>
  <headlight ambient="0.25 0.25 0.25" diffuse="0.25 0.25 0.25" specular="0 0 0"/>
</visual>
<asset>
  <texture name="sky" type="2d" builtin="gradient" rgb1="{sky1}" rgb2="{sky2}" width="64" height="64"/>
  <material name="bg_mat" texture="sky" emission="1" specular="0"/>
  <texture name="table_tex" type="2d" builtin="{tex}" rgb1="{t1}" rgb2="{t2}" width="64" height="64"/>
  <material name="table_mat" texture="table_tex" texrepeat="6 6" specular="0.1"/>
</asset>
<default>
  <default class="arm">
    <geom contype="0" conaffinity="0" rgba="0.82 0.82 0.85 1" group="1"/>
    <joint damping="2" armature="0.01"/>
  </default>
</default>
<worldbody>
  <light name="key" directional="true" pos="0.6 -0.4 1.6" dir="-0.1 0.25 -1" diffuse="{kd}" ambient="{ka}" specular="0.1 0.1 0.1" castshadow="false"/>
  <light name="fill" directional="true" pos="1.5 0.5 1.0" dir="-1 -0.3 -0.6" diffuse="{fd}" specular="0 0 0" castshadow="false"/>
  <camera name="scene_cam" pos="{cp}" xyaxes="{cxy}" fovy="{fovy}"/>
  <geom name="background" type="box" size="0.01 3 2.5" pos="-0.9 0 0.5" material="bg_mat" contype="0" conaffinity="0"/>
  <geom name="table" type="box" size="0.5 0.55 0.02" pos="0.45 0 -0.02" material="table_mat" friction="1 0.005 0.0001"/>
  <body name="ee_target" mocap="true" pos="{home}"/>
"#,
        sky1 = rgb(a.sky_rgb1),
        sky2 = rgb(a.sky_rgb2),
        tex = a.table_texture.builtin(),
        t1 = rgb(a.table_rgb1),
        t2 = rgb(a.table_rgb2),
        kd = rgb(tint.map(|t| t * key)),
        ka = rgb(tint.map(|t| t * 0.2)),
        fd = rgb(tint.map(|t| t * key * 0.4)),
        cp = v3(cam_pos),
        cxy = cam_xy.map(|v| format!("{v:.6}")).join(" "),
        fovy = a.camera.fovy,
        home = v3(HAND_HOME),
    );
    arm(&mut x);
    for (i, p) in l
        .blocks
        .iter()
        .enumerate()
        .chain(memory_block_parking(fam).iter().map(|(i, p)| (*i, p)))
    {
        let q = quat_from_rpy(0.0, 0.0, p.yaw);
        let col = a.shade(fam.block_color(i).rgb());
        let _ = writeln!(
            x,
            r#"  <body name="block{i}" pos="{} {} {BLOCK_HALF}" quat="{} {} {} {}"><freejoint name="block{i}_free"/><geom name="block{i}_geom" type="box" size="{BLOCK_HALF} {BLOCK_HALF} {BLOCK_HALF}" mass="0.05" friction="1 0.005 0.0001" condim="4" rgba="{}"/></body>"#,
            p.x,
            p.y,
            q[0],
            q[1],
            q[2],
            q[3],
            rgba(col)
        );
    }
    for (i, t) in l.trays.iter().enumerate() {
        let col = match fam.tray_color(i) {
            Some(c) => a.shade(c.rgb()).map(|v| 0.35 + 0.6 * v),
            None => a.shade([0.6, 0.6, 0.62]),
        };
        tray(&mut x, i, t.x, t.y, &rgba(col));
    }
    for (i, p) in l.pads.iter().enumerate() {
        let _ = writeln!(
            x,
            r#"  <geom name="pad{i}_geom" type="cylinder" size="0.035 0.0008" pos="{} {} 0.0008" contype="0" conaffinity="0" rgba="{}"/><site name="pad{i}" pos="{} {} 0" size="0.005"/>"#,
            p.x,
            p.y,
            rgba(a.shade([0.95, 0.95, 0.95])),
            p.x,
            p.y
        );
    }
    if let Some(d) = &l.door {
        let s = match d.hinge {
            HingeSide::Left => 1.0,
            HingeSide::Right => -1.0,
        };
        let (hx, hy) = (d.x, d.y + s * 0.1);
        let panel = rgba(a.shade([0.55, 0.38, 0.22]));
        let frame = rgba(a.shade([0.35, 0.35, 0.38]));
        let lever = rgba(a.shade([0.85, 0.75, 0.2]));
        let _ = write!(
            x,
            r#"  <body name="door_frame" pos="{hx} {hy} 0" quat="{qw} 0 0 {qz}">
  <geom name="post_hinge" type="box" size="0.012 0.01 0.11" pos="0 {py1} 0.11" rgba="{frame}"/>
  <geom name="post_free" type="box" size="0.012 0.01 0.11" pos="0 {py2} 0.11" rgba="{frame}"/>
  <geom name="beam" type="box" size="0.012 {bw} 0.01" pos="0 {by} 0.23" rgba="{frame}"/>
  <body name="door" pos="0 0 0">
    <joint name="door_hinge" type="hinge" axis="0 0 {s}" range="0 1.6" stiffness="{k}" springref="0" damping="{DOOR_DAMPING}" armature="0.002"/>
    <geom name="door_panel" type="box" size="0.01 0.094 0.095" pos="0 {pc} 0.1" mass="0.3" rgba="{panel}"/>
    <geom name="lever_stem" type="box" size="0.0175 0.005 0.005" pos="-0.0275 {lp} 0.16" mass="0.01" rgba="{lever}"/>
    <site name="door_push" pos="-0.01 {pp} 0.05" size="0.005"/>
    <body name="lever" pos="-0.045 {lp} 0.16" gravcomp="1">
      <joint name="lever_hinge" type="hinge" axis="{ls} 0 0" range="0 0.9" stiffness="0.05" springref="0" damping="0.005"/>
      <geom name="lever_geom" type="capsule" fromto="0 0 0 0 {lt} 0" size="0.007" mass="0.02" rgba="{lever}"/>
      <site name="lever_tip" pos="0 {lt2} 0" size="0.004"/>
    </body>
  </body>
  </body>
"#,
            qw = (d.yaw / 2.0).cos(),
            qz = (d.yaw / 2.0).sin(),
            py1 = s * 0.03,
            py2 = -s * 0.215,
            bw = 0.1425,
            by = -s * 0.0925,
            k = d.stiffness,
            pc = -s * 0.097,
            lp = -s * 0.15,
            pp = -s * 0.12,
            ls = -s,
            lt = s * 0.05,
            lt2 = s * 0.04,
        );
    }
    for (i, o) in l.obstacles.iter().enumerate() {
        let _ = writeln!(
            x,
            r#"  <geom name="obstacle{i}" type="box" size="{} {} {}" pos="{} {} {}" rgba="{}"/>"#,
            o.half[0],
            o.half[1],
            o.half[2],
            o.x,
            o.y,
            o.half[2],
            rgba(a.shade([0.45, 0.3, 0.5]))
        );
    }
    x.push_str("</worldbody>\n");
    let _ = write!(
        x,
        r#"<equality>
  <weld name="ee_weld" body1="ee_target" body2="hand" solref="0.01 1"/>
{latch}</equality>
<actuator>
  <position name="grip_l" joint="finger_l" kp="400" ctrlrange="0 {FINGER_OPEN}" forcerange="-40 40"/>
  <position name="grip_r" joint="finger_r" kp="400" ctrlrange="0 {FINGER_OPEN}" forcerange="-40 40"/>
</actuator>
</mujoco>
"#,
        latch = if l.door.is_some() {
            "  <joint name=\"latch\" joint1=\"door_hinge\" polycoef=\"0 0 0 0 0\"/>\n"
        } else {
            ""
        },
    );
    x
}

/// Memory families place their blocks at reset (the origin is part of the episode, not the scene), so
/// the model parks them at fixed spots that the episode overwrites.
fn memory_block_parking(fam: Family) -> Vec<(usize, crate::scene::Placement)> {
    match fam {
        Family::PutBack | Family::Swap | Family::Rearrange => (0..fam.n_blocks())
            .map(|i| {
                (
                    i,
                    crate::scene::Placement {
                        x: 0.3 + 0.06 * i as f64,
                        y: -0.42,
                        yaw: 0.0,
                    },
                )
            })
            .collect(),
        _ => vec![],
    }
}

fn tray(x: &mut String, i: usize, cx: f64, cy: f64, col: &str) {
    let w = TRAY_INNER_HALF + 0.004;
    let _ = writeln!(
        x,
        r#"  <body name="tray{i}" pos="{cx} {cy} 0">
    <geom name="tray{i}_base" type="box" size="{w} {w} 0.003" pos="0 0 0.003" rgba="{col}"/>
    <geom type="box" size="{w} 0.004 0.012" pos="0 {w} 0.012" rgba="{col}"/>
    <geom type="box" size="{w} 0.004 0.012" pos="0 -{w} 0.012" rgba="{col}"/>
    <geom type="box" size="0.004 {w} 0.012" pos="{w} 0 0.012" rgba="{col}"/>
    <geom type="box" size="0.004 {w} 0.012" pos="-{w} 0 0.012" rgba="{col}"/>
  </body>"#
    );
}

/// A 7-DoF arm of capsules whose hand is welded to the `ee_target` mocap body. Arm links do not collide
/// (only the hand and fingers do) and carry gravity compensation, so the weld alone moves the hand.
fn arm(x: &mut String) {
    let _ = write!(
        x,
        r#"  <geom name="pedestal" type="cylinder" size="0.08 0.05" pos="0 0 0.05" class="arm"/>
  <body name="link1" pos="0 0 0.1" gravcomp="1" childclass="arm">
    <joint name="j1" axis="0 0 1"/>
    <geom type="capsule" fromto="0 0 0 0 0 0.2" size="0.05" mass="0.5"/>
    <body name="link2" pos="0 0 0.2" gravcomp="1">
      <joint name="j2" axis="0 1 0"/>
      <joint name="j3" axis="0.4472 0 0.8944"/>
      <geom type="capsule" fromto="0 0 0 0.2 0 0.4" size="0.045" mass="0.5"/>
      <body name="link3" pos="0.2 0 0.4" gravcomp="1">
        <joint name="j4" axis="0 1 0"/>
        <joint name="j5" axis="0.5300 0 -0.8480"/>
        <geom type="capsule" fromto="0 0 0 0.25 0 -0.4" size="0.04" mass="0.4"/>
        <body name="link4" pos="0.25 0 -0.4" gravcomp="1">
          <joint name="j6" axis="0 1 0"/>
          <geom type="capsule" fromto="0 0 0 0 0 -0.03" size="0.035" mass="0.2"/>
          <body name="hand" pos="0 0 -0.04" gravcomp="1">
            <joint name="j7" axis="0 0 1"/>
            <geom name="palm" type="box" size="0.02 0.06 0.012" contype="1" conaffinity="1" rgba="0.3 0.3 0.32 1" mass="0.2"/>
            <site name="tcp" pos="0 0 -{TCP_OFFSET}" size="0.004"/>
            <camera name="wrist_cam" pos="-0.07 0 -0.01" xyaxes="0 -1 0 1 0 0" fovy="75"/>
            <body name="finger_l" pos="0 0 -0.012" gravcomp="1">
              <joint name="finger_l" type="slide" axis="0 1 0" range="0 {FINGER_OPEN}" damping="4" armature="0.001"/>
              <geom name="finger_l_geom" type="box" size="0.012 0.006 0.03" pos="0 0.008 -0.03" contype="1" conaffinity="1" friction="1.5 0.01 0.0001" condim="4" mass="0.05" rgba="0.2 0.2 0.22 1"/>
            </body>
            <body name="finger_r" pos="0 0 -0.012" gravcomp="1">
              <joint name="finger_r" type="slide" axis="0 -1 0" range="0 {FINGER_OPEN}" damping="4" armature="0.001"/>
              <geom name="finger_r_geom" type="box" size="0.012 0.006 0.03" pos="0 -0.008 -0.03" contype="1" conaffinity="1" friction="1.5 0.01 0.0001" condim="4" mass="0.05" rgba="0.2 0.2 0.22 1"/>
            </body>
          </body>
        </body>
      </body>
    </body>
  </body>
"#
    );
}
