//! Streams the PNG frames of a LeRobot `image` feature out of the Parquet data files, one record
//! batch at a time, so that a whole dataset's images never sit in memory together. (The data
//! crate's `read_image` reads a whole file per frame, which is quadratic over a dataset.)

use std::collections::BTreeSet;
use std::io::Cursor;
use std::path::{Path, PathBuf};

use arrow_array::cast::AsArray;
use arrow_array::types::{Int32Type, Int64Type};
use arrow_array::{Array, ArrayRef};
use arrow_schema::DataType;
use parquet::arrow::ProjectionMask;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use roboaudit_data::lerobot::{LeRobotDataset, Rgb8Image};

use crate::FqeError;

/// One encoded frame: its global `index`, the PNG bytes and where they came from.
pub(crate) struct EncodedFrame<'a> {
    pub index: i64,
    pub bytes: &'a [u8],
    pub file: &'a Path,
}

fn ints(array: &ArrayRef) -> Option<Vec<i64>> {
    match array.data_type() {
        DataType::Int64 => Some(array.as_primitive::<Int64Type>().values().to_vec()),
        DataType::Int32 => Some(
            array
                .as_primitive::<Int32Type>()
                .values()
                .iter()
                .map(|v| i64::from(*v))
                .collect(),
        ),
        _ => None,
    }
}

fn binary(array: &dyn Array, i: usize) -> Option<&[u8]> {
    match array.data_type() {
        DataType::Binary => Some(array.as_binary::<i32>().value(i)),
        DataType::LargeBinary => Some(array.as_binary::<i64>().value(i)),
        DataType::BinaryView => Some(array.as_binary_view().value(i)),
        _ => None,
    }
}

/// Calls `f` for every row of every data file of `ds` with the PNG bytes of `feature`.
pub(crate) fn for_each_image(
    ds: &LeRobotDataset,
    feature: &str,
    f: &mut dyn FnMut(EncodedFrame<'_>) -> Result<(), FqeError>,
) -> Result<(), FqeError> {
    let files: BTreeSet<PathBuf> = ds
        .episodes()
        .iter()
        .map(|e| ds.root().join(&e.data_file))
        .collect();
    for file in &files {
        let pq =
            |e: parquet::errors::ParquetError| FqeError::bad_file(file, format!("Parquet: {e}"));
        let handle = std::fs::File::open(file).map_err(|e| FqeError::io("open", file, e))?;
        let builder = ParquetRecordBatchReaderBuilder::try_new(handle).map_err(pq)?;
        let names: Vec<String> = builder
            .schema()
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .collect();
        let roots: Vec<usize> = names
            .iter()
            .enumerate()
            .filter(|(_, n)| *n == "index" || *n == feature)
            .map(|(k, _)| k)
            .collect();
        if roots.len() != 2 {
            return Err(FqeError::bad_file(
                file,
                format!("data file lacks column \"index\" or \"{feature}\""),
            ));
        }
        let mask = ProjectionMask::roots(builder.parquet_schema(), roots);
        let reader = builder
            .with_projection(mask)
            .with_batch_size(512)
            .build()
            .map_err(pq)?;
        for batch in reader {
            let batch = batch.map_err(|e| FqeError::bad_file(file, format!("Parquet: {e}")))?;
            let index = batch
                .column_by_name("index")
                .and_then(ints)
                .ok_or_else(|| FqeError::bad_file(file, "column \"index\" is not an integer"))?;
            let images = batch
                .column_by_name(feature)
                .ok_or_else(|| FqeError::bad_file(file, format!("no column \"{feature}\"")))?;
            for (i, idx) in index.iter().enumerate() {
                let owned;
                let bytes: &[u8] = match images.data_type() {
                    DataType::Struct(_) => {
                        let st = images.as_struct();
                        match st.column_by_name("bytes") {
                            Some(b) if !b.is_null(i) => binary(b.as_ref(), i).ok_or_else(|| {
                                FqeError::bad_file(
                                    file,
                                    format!("\"{feature}\".bytes is not binary"),
                                )
                            })?,
                            _ => {
                                let path = st
                                    .column_by_name("path")
                                    .filter(|p| !p.is_null(i))
                                    .and_then(|p| match p.data_type() {
                                        DataType::Utf8 => {
                                            Some(p.as_string::<i32>().value(i).to_owned())
                                        }
                                        DataType::LargeUtf8 => {
                                            Some(p.as_string::<i64>().value(i).to_owned())
                                        }
                                        _ => None,
                                    })
                                    .ok_or_else(|| {
                                        FqeError::bad_file(
                                            file,
                                            format!(
                                                "frame {idx}: image has neither bytes nor a path"
                                            ),
                                        )
                                    })?;
                                let image_file = ds.root().join(path);
                                owned = std::fs::read(&image_file)
                                    .map_err(|e| FqeError::io("read", &image_file, e))?;
                                &owned
                            }
                        }
                    }
                    _ => binary(images.as_ref(), i).ok_or_else(|| {
                        FqeError::bad_file(file, format!("\"{feature}\" is not an image column"))
                    })?,
                };
                f(EncodedFrame {
                    index: *idx,
                    bytes,
                    file,
                })?;
            }
        }
    }
    Ok(())
}

/// Decodes PNG bytes of any colour type to RGB8 (alpha dropped, grey copied to three channels).
pub(crate) fn decode_png(bytes: &[u8], file: &Path, index: i64) -> Result<Rgb8Image, FqeError> {
    let bad = |m: String| FqeError::bad_file(file, format!("frame {index}: {m}"));
    let mut decoder = png::Decoder::new(Cursor::new(bytes));
    decoder.set_transformations(png::Transformations::normalize_to_color8());
    let mut reader = decoder
        .read_info()
        .map_err(|e| bad(format!("not a PNG: {e}")))?;
    let size = reader
        .output_buffer_size()
        .ok_or_else(|| bad("PNG too large".into()))?;
    let mut buf = vec![0; size];
    let out = reader
        .next_frame(&mut buf)
        .map_err(|e| bad(format!("corrupt PNG: {e}")))?;
    let samples = match out.color_type {
        png::ColorType::Grayscale => 1,
        png::ColorType::GrayscaleAlpha => 2,
        png::ColorType::Rgb => 3,
        png::ColorType::Rgba => 4,
        png::ColorType::Indexed => return Err(bad("indexed PNG was not expanded".into())),
    };
    let (w, h) = (out.width as usize, out.height as usize);
    let mut rgb = Vec::with_capacity(w * h * 3);
    for line in buf.chunks(out.line_size).take(h) {
        for px in line[..w * samples].chunks(samples) {
            match samples {
                1 | 2 => rgb.extend_from_slice(&[px[0], px[0], px[0]]),
                _ => rgb.extend_from_slice(&px[..3]),
            }
        }
    }
    Ok(Rgb8Image {
        width: out.width,
        height: out.height,
        pixels: rgb,
    })
}
