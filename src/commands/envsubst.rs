use anyhow::Result;

use crate::cli::EnvsubstArgs;
use crate::ports::envsubst::envsubst;

/// Like `flux envsubst`, plus ConfigMap files: the whole of stdin is one text, as Flux substitutes
/// one object's YAML at a time.
pub fn run(args: EnvsubstArgs) -> Result<()> {
    let mut vars: std::collections::BTreeMap<String, String> = std::env::vars().collect();
    for path in &args.from {
        vars.extend(super::read_values(path)?);
    }
    // Bounded: `cellgen envsubst < /dev/zero` ends with an error, not with memory exhausted.
    let input = crate::root::limited::read_text(std::io::stdin(), camino::Utf8Path::new("stdin"))?;
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
    crate::commands::ui::out::stdout_bytes(output.as_bytes())?;
    Ok(())
}
