use serde::de::DeserializeOwned;

/// A model file that cannot be used, with the file and the field at fault.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    #[error("{file}: {message}")]
    Io { file: String, message: String },
    #[error("{file}: {field}: {message}")]
    Invalid {
        file: String,
        field: String,
        message: String,
    },
}

/// Deserialises JSON and, on failure, names the path of the offending field.
pub(crate) fn from_json<T: DeserializeOwned>(file: &str, text: &str) -> Result<T, ModelError> {
    let de = &mut serde_json::Deserializer::from_str(text);
    serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        ModelError::Invalid {
            file: file.to_string(),
            field: if path == "." {
                "(document)".into()
            } else {
                path
            },
            message: e.into_inner().to_string(),
        }
    })
}
