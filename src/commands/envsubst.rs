use std::io::{Read, Write};

use anyhow::{Context, Result};

use crate::cli::EnvsubstArgs;
use crate::ports::envsubst::envsubst;

/// Like `flux envsubst`, plus ConfigMap files: the whole of stdin is one text, as Flux substitutes
/// one object's YAML at a time.
pub fn run(args: EnvsubstArgs) -> Result<()> {
    let mut vars: std::collections::BTreeMap<String, String> = std::env::vars().collect();
    for path in &args.from {
        vars.extend(super::read_values(path)?);
    }
    let mut input = String::new();
    std::io::stdin()
        .read_to_string(&mut input)
        .context("cannot read stdin (is it UTF-8 text?)")?;
    let lookup = |name: &str| vars.get(name).cloned();
    let output = envsubst(&input, &lookup, args.strict).map_err(|e| {
        let at = e
            .offset()
            .map(|o| {
                format!(
                    " at line {}",
                    crate::ports::edit::text::line_number(&input, o)
                )
            })
            .unwrap_or_default();
        anyhow::anyhow!("stdin{at}: {e}")
    })?;
    std::io::stdout()
        .write_all(output.as_bytes())
        .context("cannot write stdout")?;
    Ok(())
}
