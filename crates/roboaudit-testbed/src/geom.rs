//! Small 3-D helpers (vectors, quaternions in MuJoCo's `w, x, y, z` order).

/// A 3-vector in metres (world frame unless said otherwise).
pub type Vec3 = [f64; 3];
/// A unit quaternion `[w, x, y, z]` (MuJoCo order).
pub type Quat = [f64; 4];

/// `a - b`.
pub fn sub(a: Vec3, b: Vec3) -> Vec3 {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

/// Euclidean norm.
pub fn norm(a: Vec3) -> f64 {
    (a[0] * a[0] + a[1] * a[1] + a[2] * a[2]).sqrt()
}

/// Cross product `a × b`.
pub fn cross(a: Vec3, b: Vec3) -> Vec3 {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

/// `a / |a|`, or `a` unchanged when its norm is zero.
pub fn normalize(a: Vec3) -> Vec3 {
    let n = norm(a);
    if n > 0.0 {
        [a[0] / n, a[1] / n, a[2] / n]
    } else {
        a
    }
}

/// Quaternion from intrinsic roll (x), pitch (y), yaw (z) in radians: `q = qz(yaw) qy(pitch) qx(roll)`.
pub fn quat_from_rpy(roll: f64, pitch: f64, yaw: f64) -> Quat {
    let (sr, cr) = (roll * 0.5).sin_cos();
    let (sp, cp) = (pitch * 0.5).sin_cos();
    let (sy, cy) = (yaw * 0.5).sin_cos();
    [
        cr * cp * cy + sr * sp * sy,
        sr * cp * cy - cr * sp * sy,
        cr * sp * cy + sr * cp * sy,
        cr * cp * sy - sr * sp * cy,
    ]
}

/// Yaw angle (rotation about world z, radians in `(-π, π]`) of quaternion `q`.
pub fn yaw_of(q: Quat) -> f64 {
    let [w, x, y, z] = q;
    (2.0 * (w * z + x * y)).atan2(1.0 - 2.0 * (y * y + z * z))
}

/// Wraps an angle to `(-π, π]`.
pub fn wrap_angle(a: f64) -> f64 {
    let t = std::f64::consts::TAU;
    let mut r = a % t;
    if r > std::f64::consts::PI {
        r -= t;
    } else if r <= -std::f64::consts::PI {
        r += t;
    }
    r
}

/// Camera `xyaxes` (MuJoCo convention: x right, y up, the camera looks along −z) for a camera at `pos`
/// looking at `target`, rolled by `roll` radians about the viewing direction.
pub fn look_at_xyaxes(pos: Vec3, target: Vec3, roll: f64) -> [f64; 6] {
    let f = normalize(sub(target, pos));
    let x0 = normalize(cross(f, [0.0, 0.0, 1.0]));
    let y0 = cross([-f[0], -f[1], -f[2]], x0);
    let (s, c) = roll.sin_cos();
    let x = [
        c * x0[0] + s * y0[0],
        c * x0[1] + s * y0[1],
        c * x0[2] + s * y0[2],
    ];
    let y = [
        -s * x0[0] + c * y0[0],
        -s * x0[1] + c * y0[1],
        -s * x0[2] + c * y0[2],
    ];
    [x[0], x[1], x[2], y[0], y[1], y[2]]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaw_round_trips_through_quaternion() {
        for yaw in [-3.0, -1.2, 0.0, 0.4, 2.9] {
            let q = quat_from_rpy(0.0, 0.0, yaw);
            assert!((yaw_of(q) - yaw).abs() < 1e-12, "{yaw}");
        }
    }

    #[test]
    fn look_at_forward_axis_is_right_handed() {
        let xy = look_at_xyaxes([0.0, 0.0, 0.0], [1.0, 0.0, 0.0], 0.0);
        // Looking along +x with z up: right is −y and up is +z.
        assert_eq!(xy, [0.0, -1.0, 0.0, 0.0, 0.0, 1.0]);
    }

    #[test]
    fn wrap_angle_stays_in_range() {
        assert!((wrap_angle(3.0 * std::f64::consts::PI) - std::f64::consts::PI).abs() < 1e-12);
        assert!((wrap_angle(-0.5) + 0.5).abs() < 1e-12);
    }
}
