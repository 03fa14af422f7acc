//! Worksite (scene) files: obstacles and their contact elements kept beside a machine, which
//! the interactive front-ends add to it. A model names its worksite with `scene = "FILE"` (a
//! path relative to the model file); `hydraulink serve` and `hydraulink realtime` add it unless
//! `--no-scene`, `hydraulink run` only with `--scene` (or `--scene FILE`), so the machine's
//! batch results do not depend on it.
//!
//! A scene file holds an optional `description`, `[[elements]]` tables exactly as a model file
//! writes them (typically `obb_contact` elements naming the machine's bodies and markers, and a
//! `bucket_dig`), and optionally the worksite's `[terrain]` and the `[game]` played on it, as a
//! model file writes them. Its elements are appended to the model's; its terrain and game become
//! the model's (a model that has its own is an error: one ground, one game). A model error in
//! any of them is reported at the scene file's line, with the path counted in the scene file
//! (`elements[0]` is its first).

use std::path::{Path, PathBuf};

use hydraulink::elements::component::ComponentSpec;
use hydraulink::error::ModelError;
use hydraulink::model::spec::{GameSpec, ModelSpec};
use hydraulink::terrain::data::TerrainSpec;
use serde::{Deserialize, Serialize};
use toml::de::DeTable;

use crate::error::{LoadError, LoadErrorKind};
use crate::locate::{format_path, locate_path, parse_path, Segment};
use crate::model_file::toml_error;

/// The contents of a scene file (its JSON Schema: `schema::scene_schema`).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SceneSpec {
    /// What the worksite holds.
    #[serde(default)]
    pub description: String,
    /// Elements added to the machine, as `[[elements]]` of a model file.
    #[serde(default)]
    pub elements: Vec<ComponentSpec>,
    /// The worksite's deformable ground, as `[terrain]` of a model file.
    #[serde(default)]
    pub terrain: Option<TerrainSpec>,
    /// The game played on the worksite, as `[game]` of a model file.
    #[serde(default)]
    pub game: Option<GameSpec>,
}

/// A scene file read and parsed, and where its elements went in the model.
#[derive(Debug, Clone, PartialEq)]
pub struct Scene {
    /// The file name as reported in errors.
    pub file: String,
    /// Its text.
    pub text: String,
    /// Its contents.
    pub spec: SceneSpec,
    /// Index in the model's `elements` of the scene's first element (set by [`add_scene`]).
    pub first_element: usize,
}

/// Which scene to add to a model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SceneChoice {
    /// None.
    None,
    /// The model's own (`scene = "FILE"`), if it names one.
    Model,
    /// This file.
    File(PathBuf),
}

/// The scene file of `choice` for the model at `model_path` (`None`: the built-in model, which
/// names none): the model's own `scene` resolved against the model file's directory.
pub fn scene_path(
    choice: &SceneChoice,
    model_path: Option<&Path>,
    spec: &ModelSpec,
) -> Option<PathBuf> {
    match choice {
        SceneChoice::None => None,
        SceneChoice::File(p) => Some(p.clone()),
        SceneChoice::Model => {
            let name = spec.scene.as_ref()?;
            let dir = model_path
                .and_then(Path::parent)
                .unwrap_or_else(|| Path::new(""));
            Some(dir.join(name))
        }
    }
}

/// Parses a scene from TOML `text`; `file` names it in errors (located by line and column).
pub fn parse_scene(text: &str, file: &str) -> Result<Scene, LoadError> {
    let doc = DeTable::parse(text).map_err(|error| {
        let (recovered, _) = DeTable::parse_recoverable(text);
        toml_error(text, file, LoadErrorKind::Syntax, &error, &recovered)
    })?;
    let spec = SceneSpec::deserialize(toml::de::Deserializer::from(doc.clone()))
        .map_err(|error| toml_error(text, file, LoadErrorKind::Schema, &error, &doc))?;
    Ok(Scene {
        file: file.to_string(),
        text: text.to_string(),
        spec,
        first_element: 0,
    })
}

/// Reads and parses a scene file.
pub fn load_scene(path: &Path) -> Result<Scene, LoadError> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|error| {
        LoadError::new(
            LoadErrorKind::Io,
            &file,
            format!("cannot read scene file: {error}"),
        )
    })?;
    parse_scene(&text, &file)
}

/// `spec` with the worksite of `choice` added ([`scene_path`], [`load_scene`], [`add_scene`]),
/// and that worksite; the spec unchanged and none when `choice` names no scene.
pub fn with_scene(
    mut spec: ModelSpec,
    choice: &SceneChoice,
    model_path: Option<&Path>,
) -> Result<(ModelSpec, Option<Scene>), LoadError> {
    let Some(path) = scene_path(choice, model_path, &spec) else {
        return Ok((spec, None));
    };
    let mut scene = load_scene(&path)?;
    add_scene(&mut spec, &mut scene)?;
    Ok((spec, Some(scene)))
}

/// Appends the scene's elements to `spec` (and records where they start), and gives it the
/// scene's terrain and game. A scene's `[terrain]` or `[game]` on a model that has its own is an
/// error at the scene file's table.
pub fn add_scene(spec: &mut ModelSpec, scene: &mut Scene) -> Result<(), LoadError> {
    let conflict = |table: &str| {
        let location = locate_path(&scene.text, table);
        LoadError {
            kind: LoadErrorKind::Model,
            file: scene.file.clone(),
            line: location.and_then(|(line, _)| u32::try_from(line).ok()),
            column: location.and_then(|(_, column)| u32::try_from(column).ok()),
            element: Some(table.to_string()),
            path: Some(table.to_string()),
            message: format!(
                "the model has its own [{table}]: a machine with a worksite has one \
                 (leave it out of the model or of the scene)"
            ),
        }
    };
    if scene.spec.terrain.is_some() && spec.terrain.is_some() {
        return Err(conflict("terrain"));
    }
    if scene.spec.game.is_some() && spec.game.is_some() {
        return Err(conflict("game"));
    }
    scene.first_element = spec.elements.len();
    spec.elements.extend(scene.spec.elements.iter().cloned());
    if let Some(t) = &scene.spec.terrain {
        spec.terrain = Some(t.clone());
    }
    if let Some(g) = &scene.spec.game {
        spec.game = Some(g.clone());
    }
    Ok(())
}

impl Scene {
    /// A model error in one of the scene's elements, located in the scene file (its path
    /// counted there); `None` for an error elsewhere in the model.
    pub fn locate(&self, error: &ModelError) -> Option<LoadError> {
        let mut segments = parse_path(&error.path)?;
        match segments.as_slice() {
            [Segment::Key(k), Segment::Index(i), ..] if k == "elements" => {
                let i = i.checked_sub(self.first_element)?;
                segments[1] = Segment::Index(i);
            }
            [Segment::Key(k), ..] if k == "terrain" && self.spec.terrain.is_some() => {}
            [Segment::Key(k), ..] if k == "game" && self.spec.game.is_some() => {}
            _ => return None,
        }
        let path = format_path(&segments);
        let location = locate_path(&self.text, &path);
        Some(LoadError {
            kind: LoadErrorKind::Model,
            file: self.file.clone(),
            line: location.and_then(|(line, _)| u32::try_from(line).ok()),
            column: location.and_then(|(_, column)| u32::try_from(column).ok()),
            element: Some(error.element.clone()),
            path: Some(path),
            message: error.message.clone(),
        })
    }
}
