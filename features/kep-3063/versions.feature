@kep-3063
Feature: Objects written in an older served version of resource.k8s.io are stored without loss

  The manifests versions-v1beta1.yaml and versions-v1beta2.yaml write every field of each DRA kind (with the
  gates on by default) in that version; versions-v1.yaml holds the same values at their v1 places.

  Rule: KEP-3063/SERVED-VERSIONS-ROUND-TRIP  Every field written in v1beta1 or v1beta2 reads back in v1 unchanged

    Scenario Outline: A <kind> written in <version> with every field is stored as its v1 form (<name>)
      When the user creates the objects of manifest "versions-<version>.yaml"
      Then the request is accepted
      And the stored <kind> "<name>-<version>" has the spec of <kind> "<name>-v1" in manifest "versions-v1.yaml"

      Examples:
        | kind                  | name        | version |
        | DeviceClass           | every-field | v1beta1 |
        | ResourceSlice         | every-field | v1beta1 |
        | ResourceSlice         | counters    | v1beta1 |
        | ResourceClaim         | every-field | v1beta1 |
        | ResourceClaimTemplate | every-field | v1beta1 |
        | DeviceClass           | every-field | v1beta2 |
        | ResourceSlice         | every-field | v1beta2 |
        | ResourceSlice         | counters    | v1beta2 |
        | ResourceClaim         | every-field | v1beta2 |
        | ResourceClaimTemplate | every-field | v1beta2 |
