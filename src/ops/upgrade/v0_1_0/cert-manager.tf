# IAM role of cert-manager, associated with cert-manager/cert-manager, for Route53 DNS01 challenges.
# Narrow the hosted zones to the ones this cell issues certificates for.
module "cert_manager_pod_identity" {
  source  = "terraform-aws-modules/eks-pod-identity/aws"
  version = "~> 2.0"

  # The exact name: with the module's default name prefix, aws_iam_role.name_prefix takes at
  # most 38 characters, which <cell>-cert-manager- can exceed.
  name            = "${var.name}-cert-manager"
  use_name_prefix = false

  attach_cert_manager_policy    = true
  cert_manager_hosted_zone_arns = ["arn:aws:route53:::hostedzone/*"]

  associations = {
    this = {
      cluster_name    = module.eks.cluster_name
      namespace       = "cert-manager"
      service_account = "cert-manager"
    }
  }

  tags = local.tags
}
