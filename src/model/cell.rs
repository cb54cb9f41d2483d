//! Cell names: `<aws-region>-<environment>`, e.g. `eu-west-2-prod`.

use crate::error::CellgenError;
use crate::suggest::did_you_mean;

/// IAM name prefixes built from the cell name (the eks module's role prefixes are capped at 38
/// characters) leave room for a name of this length.
pub const MAX_CELL_NAME_LEN: usize = 32;

/// Every AWS region EKS runs in (commercial, GovCloud and China partitions).
pub const AWS_REGIONS: &[&str] = &[
    "af-south-1",
    "ap-east-1",
    "ap-east-2",
    "ap-northeast-1",
    "ap-northeast-2",
    "ap-northeast-3",
    "ap-south-1",
    "ap-south-2",
    "ap-southeast-1",
    "ap-southeast-2",
    "ap-southeast-3",
    "ap-southeast-4",
    "ap-southeast-5",
    "ap-southeast-6",
    "ap-southeast-7",
    "ca-central-1",
    "ca-west-1",
    "cn-north-1",
    "cn-northwest-1",
    "eu-central-1",
    "eu-central-2",
    "eu-north-1",
    "eu-south-1",
    "eu-south-2",
    "eu-west-1",
    "eu-west-2",
    "eu-west-3",
    "il-central-1",
    "me-central-1",
    "me-south-1",
    "mx-central-1",
    "sa-east-1",
    "us-east-1",
    "us-east-2",
    "us-gov-east-1",
    "us-gov-west-1",
    "us-west-1",
    "us-west-2",
];

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CellName {
    pub name: String,
    pub region: String,
    pub environment: String,
}

impl CellName {
    /// Splits and validates a cell name against the known regions and the repository's environments.
    pub fn parse(name: &str, environments: &[String]) -> Result<CellName, CellgenError> {
        let invalid = |reason: String| CellgenError::InvalidCellName {
            name: name.to_string(),
            reason,
        };
        if name.is_empty() {
            return Err(invalid(
                "it is empty; give a name like `eu-west-2-prod` (region, then environment)".into(),
            ));
        }
        if name.len() > MAX_CELL_NAME_LEN {
            return Err(invalid(format!(
                "it is {} characters long; the limit is {MAX_CELL_NAME_LEN} because IAM role names are built from it",
                name.len()
            )));
        }
        if name.contains('/') || name.contains('\\') || name.contains("..") {
            return Err(invalid(
                "it contains a path separator or `..`; a cell name is a single directory name like `eu-west-2-prod`".into(),
            ));
        }
        if let Some(bad) = name
            .chars()
            .find(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-'))
        {
            return Err(invalid(format!(
                "`{bad}` is not allowed; use lowercase letters, digits and dashes only"
            )));
        }
        if name.starts_with('-') || name.ends_with('-') || name.contains("--") {
            return Err(invalid(
                "dashes must separate words: no leading, trailing or double dash".into(),
            ));
        }
        let shape = format!(
            "a cell is named `<region>-<environment>`, e.g. `eu-west-2-prod` (this repository's environments: {})",
            environments.join(", ")
        );
        if AWS_REGIONS.contains(&name) {
            let example = environments
                .first()
                .map_or_else(|| format!("{name}-prod"), |e| format!("{name}-{e}"));
            return Err(invalid(format!(
                "`{name}` is a region with no environment: {shape}. Did you mean `{example}`?"
            )));
        }
        // The region is the longest known one the name starts with (regions have dashes too),
        // so `us-east-1-staging-2` is region `us-east-1` and environment `staging-2`.
        let known_region = AWS_REGIONS
            .iter()
            .filter(|r| {
                name.len() > r.len() + 1 && name.starts_with(*r) && name.as_bytes()[r.len()] == b'-'
            })
            .max_by_key(|r| r.len());
        let (region, environment) = match known_region {
            Some(region) => (*region, &name[region.len() + 1..]),
            None => {
                let Some((region, environment)) = name.rsplit_once('-') else {
                    return Err(invalid(format!("it has no environment; {shape}")));
                };
                let hint = did_you_mean(region, AWS_REGIONS.iter().copied())
                    .map(|s| format!(" Did you mean `{s}-{environment}`?"))
                    .unwrap_or_else(|| " Examples: us-east-1, eu-west-2, ap-southeast-2.".into());
                return Err(invalid(format!(
                    "`{region}` is not an AWS region ({shape}).{hint}"
                )));
            }
        };
        if !environments.iter().any(|e| e == environment) {
            let hint = did_you_mean(environment, environments.iter().map(String::as_str))
                .or_else(|| {
                    crate::suggest::misspelt(environment, environments.iter().map(String::as_str))
                })
                .or_else(|| {
                    // `staging-2`: the environment is its first word.
                    environment
                        .split('-')
                        .next()
                        .filter(|first| environments.iter().any(|e| e == first))
                })
                .map(|s| format!(" Did you mean `{region}-{s}`?"))
                .unwrap_or_default();
            return Err(invalid(format!(
                "`{environment}` is not an environment of this repository (cellgen.yaml allows: {}).{hint} To add one, list it under `environments` in cellgen.yaml",
                environments.join(", ")
            )));
        }
        Ok(CellName {
            name: name.to_string(),
            region: region.to_string(),
            environment: environment.to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn envs() -> Vec<String> {
        ["dev", "staging", "prod"].map(String::from).to_vec()
    }

    #[test]
    fn splits_region_and_environment() {
        let cell = CellName::parse("eu-west-2-prod", &envs()).unwrap();
        assert_eq!(cell.region, "eu-west-2");
        assert_eq!(cell.environment, "prod");
        let cell = CellName::parse("us-gov-west-1-dev", &envs()).unwrap();
        assert_eq!(cell.region, "us-gov-west-1");
    }

    #[test]
    fn suggests_a_region_for_a_typo() {
        let err = CellName::parse("eu-wset-2-prod", &envs()).unwrap_err();
        assert!(
            err.to_string().contains("Did you mean `eu-west-2-prod`"),
            "{err}"
        );
    }

    #[test]
    fn rejects_bad_shapes() {
        for bad in [
            "",
            "EU-west-2-prod",
            "eu-west-2_prod",
            "../x",
            "a/b",
            "eu-west-2-",
            "eu-west-2--prod",
            "prod",
        ] {
            assert!(CellName::parse(bad, &envs()).is_err(), "{bad} accepted");
        }
        let long = format!("eu-west-2-{}", "p".repeat(40));
        assert!(CellName::parse(&long, &envs()).is_err());
    }

    #[test]
    fn rejects_unknown_environment_with_suggestion() {
        let err = CellName::parse("eu-west-2-prd", &envs()).unwrap_err();
        assert!(err.to_string().contains("eu-west-2-prod"), "{err}");
    }
}
