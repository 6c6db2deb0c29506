//! `scenes.csv`: one row per scene with every parameter (columns `scene_id`, `perturbation`,
//! `layout_level`, `appearance_draw`, then one column per parameter; absent objects leave cells empty).

use super::{Scene, layout::HingeSide};
use crate::error::{Result, TestbedError};

const MAX_BLOCKS: usize = 4;
const MAX_TRAYS: usize = 3;
const MAX_PADS: usize = 2;
const MAX_OBSTACLES: usize = 2;

/// Column names of `scenes.csv`, in order.
pub static SCENE_CSV_COLUMNS: std::sync::LazyLock<Vec<String>> = std::sync::LazyLock::new(|| {
    let mut c: Vec<String> = [
        "scene_id",
        "perturbation",
        "layout_level",
        "appearance_draw",
        "family",
        "layout_seed",
    ]
    .map(String::from)
    .to_vec();
    for i in 0..MAX_BLOCKS {
        c.extend(["x", "y", "yaw"].map(|k| format!("block{i}_{k}")));
    }
    for i in 0..MAX_TRAYS {
        c.extend(["x", "y"].map(|k| format!("tray{i}_{k}")));
    }
    for i in 0..MAX_PADS {
        c.extend(["x", "y"].map(|k| format!("pad{i}_{k}")));
    }
    c.extend(
        [
            "door_x",
            "door_y",
            "door_hinge",
            "door_stiffness",
            "n_obstacles",
        ]
        .map(String::from),
    );
    for i in 0..MAX_OBSTACLES {
        c.extend(["x", "y", "hx", "hy", "hz"].map(|k| format!("obstacle{i}_{k}")));
    }
    for p in ["table_rgb1", "table_rgb2", "sky_rgb1", "sky_rgb2"] {
        c.extend(["r", "g", "b"].map(|k| format!("{p}_{k}")));
    }
    c.extend(
        [
            "table_texture",
            "palette_brightness",
            "palette_desaturate",
            "light_brightness",
            "light_tint_r",
            "light_tint_g",
            "light_tint_b",
            "cam_dx",
            "cam_dy",
            "cam_dz",
            "cam_yaw",
            "cam_pitch",
            "cam_roll",
            "cam_fovy",
        ]
        .map(String::from),
    );
    c
});

fn f(v: f64) -> String {
    // Shortest round-trip representation: the CSV reproduces every parameter exactly.
    format!("{v}")
}

fn slots<T>(
    items: &[T],
    max: usize,
    width: usize,
    cells: impl Fn(&T) -> Vec<String>,
) -> Vec<String> {
    let mut out = Vec::new();
    for i in 0..max {
        match items.get(i) {
            Some(it) => out.extend(cells(it)),
            None => out.extend(std::iter::repeat_n(String::new(), width)),
        }
    }
    out
}

/// The CSV row of one scene, aligned with [`SCENE_CSV_COLUMNS`].
pub fn scene_row(s: &Scene) -> Vec<String> {
    let l = &s.layout;
    let a = &s.appearance;
    let mut r = vec![
        s.scene_id.clone(),
        s.perturbation.name().to_string(),
        l.level.to_string(),
        a.draw.to_string(),
        format!("{:?}", s.family).to_ascii_lowercase(),
        s.layout_seed.to_string(),
    ];
    r.extend(slots(&l.blocks, MAX_BLOCKS, 3, |p| {
        vec![f(p.x), f(p.y), f(p.yaw)]
    }));
    r.extend(slots(&l.trays, MAX_TRAYS, 2, |p| vec![f(p.x), f(p.y)]));
    r.extend(slots(&l.pads, MAX_PADS, 2, |p| vec![f(p.x), f(p.y)]));
    match &l.door {
        Some(d) => r.extend([
            f(d.x),
            f(d.y),
            match d.hinge {
                HingeSide::Left => "left".to_string(),
                HingeSide::Right => "right".to_string(),
            },
            f(d.stiffness),
        ]),
        None => r.extend(std::iter::repeat_n(String::new(), 4)),
    }
    r.push(l.obstacles.len().to_string());
    r.extend(slots(&l.obstacles, MAX_OBSTACLES, 5, |o| {
        vec![f(o.x), f(o.y), f(o.half[0]), f(o.half[1]), f(o.half[2])]
    }));
    for c in [a.table_rgb1, a.table_rgb2, a.sky_rgb1, a.sky_rgb2] {
        r.extend(c.map(f));
    }
    r.push(a.table_texture.builtin().to_string());
    r.extend([
        f(a.palette_brightness),
        f(a.palette_desaturate),
        f(a.light_brightness),
    ]);
    r.extend(a.light_tint.map(f));
    r.extend(a.camera.offset.map(f));
    r.extend([
        f(a.camera.yaw),
        f(a.camera.pitch),
        f(a.camera.roll),
        f(a.camera.fovy),
    ]);
    r
}

/// `scenes` as CSV bytes with a header row ([`SCENE_CSV_COLUMNS`]); the caller writes them
/// (atomically, in the CLI) wherever they belong.
///
/// # Errors
/// [`TestbedError::Csv`] when a row cannot be encoded.
pub fn scenes_csv<'a>(scenes: impl IntoIterator<Item = &'a Scene>) -> Result<Vec<u8>> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(SCENE_CSV_COLUMNS.iter())?;
    for s in scenes {
        w.write_record(scene_row(s))?;
    }
    w.into_inner().map_err(|e| TestbedError::Io {
        source: e.into_error(),
        path: "scenes.csv (in memory)".to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scene::{SceneSet, SceneSetSpec};
    use crate::task::Family;

    #[test]
    fn rows_align_with_header_and_round_trip_values() {
        let set = SceneSet::generate(&SceneSetSpec::standard(Family::Door, 2)).unwrap();
        let bytes = scenes_csv(set.all()).unwrap();
        let mut rd = csv::Reader::from_reader(bytes.as_slice());
        let header: Vec<String> = rd.headers().unwrap().iter().map(String::from).collect();
        assert_eq!(header, *SCENE_CSV_COLUMNS);
        let rows: Vec<csv::StringRecord> = rd.records().map(|r| r.unwrap()).collect();
        assert_eq!(rows.len(), 50);
        let q = &set.queries[20];
        let row = &rows[30];
        assert_eq!(&row[0], q.scene_id.as_str());
        let stiff_col = header.iter().position(|h| h == "door_stiffness").unwrap();
        let d = q.layout.door.unwrap();
        assert_eq!(row[stiff_col].parse::<f64>().unwrap(), d.stiffness);
    }
}
