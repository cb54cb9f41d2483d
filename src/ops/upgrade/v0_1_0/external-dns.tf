# IAM role of ExternalDNS, associated with external-dns/external-dns. Narrow the hosted zones to the
# ones this cell may write to.
module "external_dns_pod_identity" {
  source  = "terraform-aws-modules/eks-pod-identity/aws"
  version = "~> 2.0"

  # The exact name: with the module's default name prefix, aws_iam_role.name_prefix takes at
  # most 38 characters, which <cell>-external-dns- can exceed.
  name            = "${var.name}-external-dns"
  use_name_prefix = false

  attach_external_dns_policy    = true
  external_dns_hosted_zone_arns = ["arn:aws:route53:::hostedzone/*"]

  associations = {
    this = {
      cluster_name    = module.eks.cluster_name
      namespace       = "external-dns"
      service_account = "external-dns"
    }
  }

  tags = local.tags
}
