//! The FQE frame strip as HTML: a grid of task names and embedded PNG thumbnails.

use std::fmt::Write;

use crate::html::esc;
use crate::model::FrameStrip;

/// One `<div class="frames">` grid: per task its name and episode, then its first and last
/// frames as `data:` PNG images (the page stays self-contained).
pub(super) fn render(strip: &FrameStrip) -> String {
    let mut o = String::new();
    let _ = write!(
        o,
        "<div class=\"frames\" role=\"img\" aria-label=\"first and last frames of camera {} per task\">",
        esc(&strip.camera)
    );
    for t in &strip.tasks {
        let _ = write!(
            o,
            "<span>{}<br><small>episode {}</small></span>",
            esc(&t.task),
            t.episode
        );
        for f in &t.frames {
            let _ = write!(
                o,
                "<img src=\"data:image/png;base64,{}\" width=\"{}\" height=\"{}\" alt=\"{}, episode {}, frame {}\">",
                f.png_base64,
                f.width,
                f.height,
                esc(&t.task),
                t.episode,
                f.frame
            );
        }
        // An episode of one frame has no last frame: keep the grid's columns aligned.
        if t.frames.len() < 2 {
            o.push_str("<span></span>");
        }
    }
    let _ = write!(
        o,
        "</div><p class=\"note\">Camera <code>{}</code> of {}.</p>",
        esc(&strip.camera),
        esc(&strip.dataset.display().to_string())
    );
    o
}
