//! Streams the PNG frames of an `image` feature out of the Parquet data files, one record batch
//! of [`BATCH_ROWS`] rows at a time and only the four columns needed, so a whole dataset's images
//! never sit in memory together and each data file is read once for all its frames. This is the
//! one image-reading path: [`LeRobotDataset::read_image`] uses it too, stopping at its frame.

use std::collections::BTreeSet;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use arrow_array::cast::AsArray;
use arrow_array::types::{Int32Type, Int64Type};
use arrow_array::{Array, ArrayRef};
use arrow_schema::DataType;
use parquet::arrow::ProjectionMask;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

use super::image::{Rgb8Image, decode_png};
use super::info::FeatureKind;
use super::{LeRobotDataset, frames::not_readable};
use crate::DataError;

/// Rows per record batch: a few hundred small PNGs (tens of MB at most for large frames).
const BATCH_ROWS: usize = 512;

/// One stored frame of an `image` feature: where it is and its encoded bytes (borrowed from the
/// current record batch, or read from the file a `path` cell names).
#[derive(Debug, Clone, Copy)]
pub struct ImageBytes<'a> {
    /// `episode_index` of the row.
    pub episode_index: i64,
    /// `frame_index` of the row.
    pub frame_index: i64,
    /// Global `index` of the row.
    pub index: i64,
    /// The encoded image (PNG as LeRobot writes it).
    pub bytes: &'a [u8],
    /// The data file holding the row.
    pub file: &'a Path,
    /// 1-based row of the data file.
    pub row: usize,
    /// The feature (column) name.
    pub feature: &'a str,
}

impl ImageBytes<'_> {
    /// Decodes the bytes to RGB8 (any PNG colour type and bit depth; alpha dropped, grey copied
    /// to the three channels, 16-bit samples truncated to their high byte).
    ///
    /// # Errors
    /// [`DataError::Invalid`] naming file, row and column when the bytes are not a valid PNG.
    pub fn decode(&self) -> Result<Rgb8Image, DataError> {
        decode_png(self.bytes)
            .map_err(|m| DataError::invalid(self.file, Some(self.row), Some(self.feature), m))
    }
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

fn string(array: &dyn Array, i: usize) -> Option<String> {
    if array.is_null(i) {
        return None;
    }
    match array.data_type() {
        DataType::Utf8 => Some(array.as_string::<i32>().value(i).to_owned()),
        DataType::LargeUtf8 => Some(array.as_string::<i64>().value(i).to_owned()),
        DataType::Utf8View => Some(array.as_string_view().value(i).to_owned()),
        _ => None,
    }
}

/// Where the bytes of row `i` are: inline, or in a file named by a `path` cell.
enum Source<'a> {
    Inline(&'a [u8]),
    Path(String),
}

fn source<'a>(images: &'a ArrayRef, i: usize) -> Result<Source<'a>, String> {
    if images.is_null(i) {
        return Err("missing image (null)".to_owned());
    }
    match images.data_type() {
        DataType::Struct(_) => {
            let st = images.as_struct();
            if let Some(b) = st.column_by_name("bytes").filter(|b| !b.is_null(i)) {
                return binary(b.as_ref(), i)
                    .map(Source::Inline)
                    .ok_or_else(|| format!("image bytes have Arrow type {}", b.data_type()));
            }
            st.column_by_name("path")
                .and_then(|p| string(p.as_ref(), i))
                .map(Source::Path)
                .ok_or_else(|| "image has neither bytes nor a path".to_owned())
        }
        other => binary(images.as_ref(), i)
            .map(Source::Inline)
            .ok_or_else(|| {
                format!(
                    "expected an image struct {{bytes, path}} or binary, got Arrow type {other}"
                )
            }),
    }
}

impl LeRobotDataset {
    /// Calls `f` with every stored frame of the `image` feature `feature`, data file by data
    /// file (each file of the episodes metadata once, in path order), rows in file order,
    /// streamed in record batches. Rows of episodes missing from the metadata are passed too:
    /// the caller decides what to keep.
    ///
    /// # Errors
    /// [`DataError::Invalid`] when the feature is not a declared `image` feature (a `video`
    /// feature's message says it needs decoding, with the declared features otherwise), a data
    /// file lacks `index`, `episode_index`, `frame_index` or the column, or a cell has neither
    /// bytes nor a readable path (naming file, row and column); I/O and Parquet errors; and
    /// whatever `f` returns.
    pub fn for_each_image<E: From<DataError>>(
        &self,
        feature: &str,
        f: &mut dyn FnMut(ImageBytes<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        let files: BTreeSet<PathBuf> = self
            .episodes
            .iter()
            .map(|e| self.root.join(&e.data_file))
            .collect();
        self.check_image(feature)?;
        for file in &files {
            self.stream_file(file, feature, true, &mut |img| {
                f(img).map(|()| ControlFlow::Continue(()))
            })?;
        }
        Ok(())
    }

    pub(crate) fn check_image(&self, feature: &str) -> Result<(), DataError> {
        if self.feature(feature).map(|f| f.kind) == Some(FeatureKind::Image) {
            Ok(())
        } else {
            Err(not_readable(self, feature, "an image"))
        }
    }

    /// Streams one data file; stops early when `f` breaks. Returns whether it broke. Without
    /// `need_index`, a file lacking the `index` column is streamed with `index` −1 (a single-frame
    /// read locates its frame by episode and frame index alone).
    pub(crate) fn stream_file<E: From<DataError>>(
        &self,
        file: &Path,
        feature: &str,
        need_index: bool,
        f: &mut dyn FnMut(ImageBytes<'_>) -> Result<ControlFlow<()>, E>,
    ) -> Result<bool, E> {
        let parquet_err = |row: Option<usize>, source| DataError::Parquet {
            file: file.to_path_buf(),
            row,
            action: "read",
            source,
        };
        let handle = std::fs::File::open(file).map_err(|e| DataError::io(file, "open", e))?;
        let builder =
            ParquetRecordBatchReaderBuilder::try_new(handle).map_err(|e| parquet_err(None, e))?;
        let wanted = ["index", "episode_index", "frame_index", feature];
        let names: Vec<String> = builder
            .schema()
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .collect();
        if let Some(missing) = wanted
            .iter()
            .filter(|w| need_index || **w != "index")
            .find(|w| !names.iter().any(|n| n == *w))
        {
            return Err(DataError::MissingColumn {
                file: file.to_path_buf(),
                column: (*missing).to_owned(),
            }
            .into());
        }
        let roots: Vec<usize> = names
            .iter()
            .enumerate()
            .filter(|(_, n)| wanted.contains(&n.as_str()))
            .map(|(k, _)| k)
            .collect();
        let mask = ProjectionMask::roots(builder.parquet_schema(), roots);
        let reader = builder
            .with_projection(mask)
            .with_batch_size(BATCH_ROWS)
            .build()
            .map_err(|e| parquet_err(None, e))?;
        let mut offset = 0;
        for batch in reader {
            let batch = batch.map_err(|e| parquet_err(Some(offset + 1), e.into()))?;
            let column_ints = |name: &str| {
                batch.column_by_name(name).and_then(ints).ok_or_else(|| {
                    DataError::invalid(file, None, Some(name), "expected an integer column")
                })
            };
            let index = if batch.column_by_name("index").is_some() || need_index {
                column_ints("index")?
            } else {
                vec![-1; batch.num_rows()]
            };
            let episodes = column_ints("episode_index")?;
            let frames = column_ints("frame_index")?;
            let images = batch
                .column_by_name(feature)
                .ok_or_else(|| DataError::MissingColumn {
                    file: file.to_path_buf(),
                    column: feature.to_owned(),
                })?;
            for i in 0..batch.num_rows() {
                let row = offset + i + 1;
                let owned;
                let bytes = match source(images, i)
                    .map_err(|m| DataError::invalid(file, Some(row), Some(feature), m))?
                {
                    Source::Inline(b) => b,
                    Source::Path(p) => {
                        let image_file = self.root.join(p);
                        owned = std::fs::read(&image_file)
                            .map_err(|e| DataError::io(&image_file, "read", e))?;
                        &owned
                    }
                };
                let flow = f(ImageBytes {
                    episode_index: episodes[i],
                    frame_index: frames[i],
                    index: index[i],
                    bytes,
                    file,
                    row,
                    feature,
                })?;
                if flow.is_break() {
                    return Ok(true);
                }
            }
            offset += batch.num_rows();
        }
        Ok(false)
    }
}
