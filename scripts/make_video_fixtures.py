#!/usr/bin/env python3
"""Video test fixtures and PyAV reference values for roboaudit-video and roboaudit-data.

An independent writer and decoder: PyAV from PyPI (`av`, whose wheel bundles FFmpeg with the
libsvtav1 encoder and the libdav1d decoder). Tested with Python 3.11, av 18.1.0 (FFmpeg 8.1),
numpy 2.x, pyarrow 26.

    python3 -m venv /tmp/venv && /tmp/venv/bin/pip install av numpy pyarrow
    /tmp/venv/bin/python scripts/make_video_fixtures.py [SHARED_DATASETS]

What it writes (deterministic content; encoders are not promised to be byte-stable across
versions, so the reference JSON is always regenerated together with the videos):

- crates/roboaudit-video/tests/fixtures/
  - synthetic_av1.mp4, synthetic_h264.mp4, synthetic_mpeg4.mp4: 64x48, 10 fps, 20 frames,
    encoded exactly as LeRobot's `encode_video_frames` does (`add_stream(vcodec, fps,
    options={"g": "2", "crf": "30"})`, `pix_fmt = "yuv420p"`, frames from RGB arrays);
  - g1_trim.mp4 (the first 12 frames of g1_inspire_v21 episode 29, AV1 480x640, packets copied
    unchanged) and lingzu_trim.mp4 (the first 14 frames of lingzu_open50_v30 file 28, MPEG-4
    Part 2, one GOP and the next keyframe), when SHARED_DATASETS is given;
  - reference.json: per file, PyAV's decoder name, and per decoded frame its presentation time,
    the zlib CRC-32 of its Y, U and V planes (rows without padding: the normative decode, which
    every conformant decoder reproduces bit for bit) and of its RGB24 conversion
    (`to_ndarray(format="rgb24")`); per query time, the frame LeRobot's pyav path picks
    (nearest in presentation time over the decoded frames, float32 distances as `torch.cdist`,
    first minimum) and whether it passes `tolerance_s = 1e-4`;
  - <name>.rgb.png: PyAV's RGB24 frames of each synthetic file stacked vertically (lossless),
    for the PSNR comparison when the conversions differ.
- crates/roboaudit-data/tests/fixtures/video_v21/ (AV1, two episodes, one MP4 each) and
  video_v30/ (H.264, two episodes in one MP4 located by from_timestamp), LeRobot layouts with
  `observation.state`, `action`, `next.success` and the video key `observation.images.cam`;
  `reference.json` beside them lists each (episode, frame)'s picked frame CRC.
"""

import json
import os
import sys
import zlib

import av
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VIDEO_OUT = os.path.join(ROOT, "crates/roboaudit-video/tests/fixtures")
DATA_OUT = os.path.join(ROOT, "crates/roboaudit-data/tests/fixtures")
SHARED = sys.argv[1] if len(sys.argv) > 1 else None
W, H, FPS = 64, 48, 10
TOLERANCE_S = 1e-4
KEY = "observation.images.cam"


def synthetic_frame(i):
    """A gradient background with a moving square: textured enough to code non-trivially."""
    y, x = np.mgrid[0:H, 0:W]
    img = np.stack([(x * 4 + i * 7) % 256, (y * 5) % 256, ((x + y) * 3 + i * 11) % 256], -1)
    cx, cy = 4 + (i * 3) % (W - 16), 4 + (i * 2) % (H - 16)
    img[cy:cy + 12, cx:cx + 12] = [250, 40 + (i * 13) % 200, 30]
    return img.astype(np.uint8)


def encode(path, frames, vcodec):
    """LeRobot's encoder settings (lerobot/datasets/video_utils.py, encode_video_frames)."""
    with av.open(path, "w") as out:
        stream = out.add_stream(vcodec, FPS, options={"g": "2", "crf": "30"})
        stream.pix_fmt = "yuv420p"
        stream.width, stream.height = W, H
        for img in frames:
            for packet in stream.encode(av.VideoFrame.from_ndarray(img, format="rgb24")):
                out.mux(packet)
        for packet in stream.encode():
            out.mux(packet)


def remux_prefix(src, dst, count):
    """The first `count` video packets of `src`, copied unchanged into a new MP4."""
    with av.open(src) as inp, av.open(dst, "w") as out:
        s = inp.streams.video[0]
        o = out.add_stream_from_template(s, opaque=True)
        n = 0
        for packet in inp.demux(s):
            if packet.size == 0:
                continue
            if n == count:
                break
            packet.stream = o
            out.mux(packet)
            n += 1


def plane_bytes(frame):
    out = b""
    for k, plane in enumerate(frame.planes):
        w = frame.width if k == 0 else (frame.width + 1) // 2
        h = frame.height if k == 0 else (frame.height + 1) // 2
        buf = np.frombuffer(plane, np.uint8).reshape(-1, plane.line_size)
        out += buf[:h, :w].tobytes()
    return out


def decode_all(path):
    """PyAV's own decode: (decoder name, [(time_s, yuv crc, rgb crc, rgb array)])."""
    with av.open(path) as c:
        s = c.streams.video[0]
        frames = []
        for f in c.decode(s):
            rgb = f.to_ndarray(format="rgb24")
            frames.append((float(f.pts * s.time_base), zlib.crc32(plane_bytes(f)),
                           zlib.crc32(rgb.tobytes()), rgb))
        return s.codec_context.name, frames


def lerobot_pick(frame_times, queries):
    """LeRobot's pyav rule: float32 |q - t|, first argmin, `min < tolerance_s`."""
    loaded = np.asarray(frame_times, np.float32)
    out = []
    for q in queries:
        d = np.abs(np.float32(q) - loaded)
        k = int(np.argmin(d))
        out.append({"query_s": q, "picked": k, "within": bool(d[k] < np.float32(TOLERANCE_S))})
    return out


def reference_for(path):
    decoder, frames = decode_all(path)
    times = [f[0] for f in frames]
    # Every frame's own time (as a float32 parquet timestamp widened to f64), points just off
    # it (inside and outside the tolerance), mid-way points and times outside the video.
    queries = [float(np.float32(k / FPS)) for k in range(len(frames))]
    queries += [times[3] + 5e-5, times[3] + 2e-4, (times[4] + times[5]) / 2 + 1e-3,
                (times[4] + times[5]) / 2 - 1e-3, times[-1] + 0.5, -0.3]
    with av.open(path) as c:
        first = next(p for p in c.demux(c.streams.video[0]) if p.size)
        keyframe = {"pos": first.pos, "size": first.size}
    return {
        "decoder": decoder,
        "first_keyframe_packet": keyframe,
        "frames": [{"time_s": t, "yuv_crc32": y, "rgb_crc32": r} for t, y, r, _ in frames],
        "queries": lerobot_pick(times, queries),
    }, frames


def write_strip(path, frames):
    strip = np.concatenate([f[3] for f in frames], 0)
    with av.open(path, "w", format="image2") as out:
        s = out.add_stream("png", 1)
        s.width, s.height, s.pix_fmt = strip.shape[1], strip.shape[0], "rgb24"
        for p in s.encode(av.VideoFrame.from_ndarray(strip, format="rgb24")):
            out.mux(p)
        for p in s.encode():
            out.mux(p)


def video_fixtures():
    os.makedirs(VIDEO_OUT, exist_ok=True)
    frames = [synthetic_frame(i) for i in range(20)]
    reference = {}
    for name, vcodec in [("synthetic_av1", "libsvtav1"), ("synthetic_h264", "libx264"),
                         ("synthetic_mpeg4", "mpeg4")]:
        path = os.path.join(VIDEO_OUT, name + ".mp4")
        encode(path, frames, vcodec)
        reference[name], decoded = reference_for(path)
        write_strip(os.path.join(VIDEO_OUT, name + ".rgb.png"), decoded)
    if SHARED:
        for name, src, n in [
            ("g1_trim", "g1_inspire_v21/videos/chunk-000/observation.images.cam_high/episode_000029.mp4", 12),
            ("lingzu_trim", "lingzu_open50_v30/video/image/chunk-000/file-028.mp4", 14),
        ]:
            path = os.path.join(VIDEO_OUT, name + ".mp4")
            remux_prefix(os.path.join(SHARED, src), path, n)
            ref, _ = reference_for(path)
            ref["source"] = src
            # 30 fps sources: queries on their own grid.
            ref["queries"] = lerobot_pick([f["time_s"] for f in ref["frames"]],
                                          [float(np.float32(k / 30)) for k in range(n)]
                                          + [n / 30 + 0.2])
            reference[name] = ref
    with open(os.path.join(VIDEO_OUT, "reference.json"), "w") as f:
        json.dump(reference, f, indent=1)


def data_table(episodes, lengths, frame_base=0):
    rows = {"index": [], "episode_index": [], "frame_index": [], "timestamp": [],
            "task_index": [], "observation.state": [], "action": [], "next.success": []}
    g = frame_base
    for e, n in zip(episodes, lengths):
        for t in range(n):
            rows["index"].append(g)
            rows["episode_index"].append(e)
            rows["frame_index"].append(t)
            rows["timestamp"].append(np.float32(t / FPS))
            rows["task_index"].append(0)
            rows["observation.state"].append([t / n, e * 1.0])
            rows["action"].append([0.1 * t, -0.1 * e])
            rows["next.success"].append(bool(e == episodes[0] and t == n - 1))
            g += 1
    vec = pa.list_(pa.float32(), 2)
    return pa.table({
        "index": pa.array(rows["index"], pa.int64()),
        "episode_index": pa.array(rows["episode_index"], pa.int64()),
        "frame_index": pa.array(rows["frame_index"], pa.int64()),
        "timestamp": pa.array(rows["timestamp"], pa.float32()),
        "task_index": pa.array(rows["task_index"], pa.int64()),
        "observation.state": pa.array(rows["observation.state"], vec),
        "action": pa.array(rows["action"], vec),
        "next.success": pa.array(rows["next.success"], pa.bool_()),
    })


def info(version, total_episodes, total_frames, codec, data_path, video_path):
    vec = {"dtype": "float32", "shape": [2], "names": ["a", "b"]}
    return {
        "codebase_version": version, "robot_type": "synthetic", "total_episodes": total_episodes,
        "total_frames": total_frames, "total_tasks": 1, "chunks_size": 1000, "fps": FPS,
        "splits": {"train": f"0:{total_episodes}"}, "data_path": data_path, "video_path": video_path,
        "features": {
            KEY: {"dtype": "video", "shape": [H, W, 3], "names": ["height", "width", "channels"],
                  "info": {"video.height": H, "video.width": W, "video.codec": codec,
                           "video.pix_fmt": "yuv420p", "video.is_depth_map": False,
                           "video.fps": FPS, "video.channels": 3, "has_audio": False}},
            "observation.state": vec, "action": vec,
            "next.success": {"dtype": "bool", "shape": [1], "names": None},
            "timestamp": {"dtype": "float32", "shape": [1], "names": None},
            "frame_index": {"dtype": "int64", "shape": [1], "names": None},
            "episode_index": {"dtype": "int64", "shape": [1], "names": None},
            "index": {"dtype": "int64", "shape": [1], "names": None},
            "task_index": {"dtype": "int64", "shape": [1], "names": None},
        },
    }


def picks_for(path, queries):
    """(query → PyAV RGB CRC of LeRobot's picked frame) for one video file."""
    _, frames = decode_all(path)
    picked = lerobot_pick([f[0] for f in frames], queries)
    return [frames[p["picked"]][2] if p["within"] else None for p in picked]


def data_fixtures():
    lengths = [12, 9]
    task = "push the block"
    ref = {}
    # v2.1: one AV1 file per episode.
    root = os.path.join(DATA_OUT, "video_v21")
    os.makedirs(os.path.join(root, "meta"), exist_ok=True)
    with open(os.path.join(root, "meta/info.json"), "w") as f:
        json.dump(info("v2.1", 2, sum(lengths), "av1",
                       "data/chunk-{episode_chunk:03d}/episode_{episode_index:06d}.parquet",
                       "videos/chunk-{episode_chunk:03d}/{video_key}/episode_{episode_index:06d}.mp4"),
                  f, indent=4)
    with open(os.path.join(root, "meta/episodes.jsonl"), "w") as f:
        for e, n in enumerate(lengths):
            f.write(json.dumps({"episode_index": e, "tasks": [task], "length": n}) + "\n")
    with open(os.path.join(root, "meta/tasks.jsonl"), "w") as f:
        f.write(json.dumps({"task_index": 0, "task": task}) + "\n")
    base = 0
    ref["video_v21"] = {}
    for e, n in enumerate(lengths):
        os.makedirs(os.path.join(root, "data/chunk-000"), exist_ok=True)
        pq.write_table(data_table([e], [n], base),
                       os.path.join(root, f"data/chunk-000/episode_{e:06d}.parquet"))
        vdir = os.path.join(root, f"videos/chunk-000/{KEY}")
        os.makedirs(vdir, exist_ok=True)
        vpath = os.path.join(vdir, f"episode_{e:06d}.mp4")
        encode(vpath, [synthetic_frame(i + 40 * e) for i in range(n)], "libsvtav1")
        ref["video_v21"][str(e)] = picks_for(vpath, [float(np.float32(t / FPS)) for t in range(n)])
        base += n
    # v3.0: both episodes in one H.264 file; episode 1 starts at from_timestamp = 12/fps.
    root = os.path.join(DATA_OUT, "video_v30")
    os.makedirs(os.path.join(root, "meta/episodes/chunk-000"), exist_ok=True)
    with open(os.path.join(root, "meta/info.json"), "w") as f:
        json.dump(info("v3.0", 2, sum(lengths), "h264",
                       "data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet",
                       "videos/{video_key}/chunk-{chunk_index:03d}/file-{file_index:03d}.mp4"),
                  f, indent=4)
    os.makedirs(os.path.join(root, "data/chunk-000"), exist_ok=True)
    pq.write_table(data_table([0, 1], lengths), os.path.join(root, "data/chunk-000/file-000.parquet"))
    vdir = os.path.join(root, f"videos/{KEY}/chunk-000")
    os.makedirs(vdir, exist_ok=True)
    vpath = os.path.join(vdir, "file-000.mp4")
    encode(vpath, [synthetic_frame(i + 40 * e) for e, n in enumerate(lengths) for i in range(n)],
           "libx264")
    froms = [0.0, lengths[0] / FPS]
    pq.write_table(pa.table({
        "episode_index": pa.array([0, 1], pa.int64()),
        "tasks": pa.array([[task], [task]], pa.list_(pa.string())),
        "length": pa.array(lengths, pa.int64()),
        "data/chunk_index": pa.array([0, 0], pa.int64()),
        "data/file_index": pa.array([0, 0], pa.int64()),
        "dataset_from_index": pa.array([0, lengths[0]], pa.int64()),
        "dataset_to_index": pa.array([lengths[0], sum(lengths)], pa.int64()),
        f"videos/{KEY}/chunk_index": pa.array([0, 0], pa.int64()),
        f"videos/{KEY}/file_index": pa.array([0, 0], pa.int64()),
        f"videos/{KEY}/from_timestamp": pa.array(froms, pa.float64()),
        f"videos/{KEY}/to_timestamp": pa.array([froms[1], sum(lengths) / FPS], pa.float64()),
    }), os.path.join(root, "meta/episodes/chunk-000/file-000.parquet"))
    pq.write_table(pa.table({"task_index": pa.array([0], pa.int64()), "task": [task]}),
                   os.path.join(root, "meta/tasks.parquet"))
    ref["video_v30"] = {
        str(e): picks_for(vpath, [froms[e] + float(np.float32(t / FPS)) for t in range(n)])
        for e, n in enumerate(lengths)
    }
    with open(os.path.join(DATA_OUT, "video_reference.json"), "w") as f:
        json.dump(ref, f, indent=1)


if __name__ == "__main__":
    video_fixtures()
    data_fixtures()
