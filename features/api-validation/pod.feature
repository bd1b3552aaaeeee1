@profile:core
Feature: A pod's resource claims are well-formed (core/v1 Pod, the parts DRA relies on)

  Rule: DRA-API/POD-CLAIMS  Each pod claim names one source, and each container claim names a pod claim

    Scenario Outline: A pod with <what>
      When the user creates the Pod "trainer" from the manifests with:
        | field               | value             |
        | spec.resourceClaims | <pod claims>      |
        | spec.containers     | <containers>      |
        | spec.initContainers | <init containers> |
      Then the request is <outcome>

      Examples:
        | what                                  | pod claims                                                                          | containers                                                                      | init containers                                          | outcome                                                                                   |
        | a claim and a template claim          | [{name: gpu, resourceClaimName: shared-gpu}, {name: nic, resourceClaimTemplateName: one-nic}] | [{name: ctr, resources: {claims: [{name: gpu}, {name: nic}]}}]     | (absent)                                                 | accepted                                                                                  |
        | one claim for two requests            | [{name: gpu, resourceClaimName: two-gpus}]                                          | [{name: ctr, resources: {claims: [{name: gpu, request: first}, {name: gpu, request: second}]}}] | (absent)                  | accepted                                                                                  |
        | an entry naming both sources          | [{name: gpu, resourceClaimName: shared-gpu, resourceClaimTemplateName: one-gpu}]    | [{name: ctr}]                                                                   | (absent)                                                 | rejected at "spec.resourceClaims[0]" by rule "DRA-API/POD-CLAIMS"                         |
        | an entry naming no source             | [{name: gpu}]                                                                       | [{name: ctr}]                                                                   | (absent)                                                 | rejected at "spec.resourceClaims[0]" by rule "DRA-API/POD-CLAIMS"                         |
        | the 1.30 source wrapper               | [{name: gpu, source: {resourceClaimTemplateName: one-gpu}}]                         | [{name: ctr}]                                                                   | (absent)                                                 | rejected at "spec.resourceClaims[0].source" by rule "DRA-API/POD-CLAIMS"                  |
        | two entries of one name               | [{name: gpu, resourceClaimName: a}, {name: gpu, resourceClaimName: b}]              | [{name: ctr}]                                                                   | (absent)                                                 | rejected at "spec.resourceClaims[1].name" by rule "DRA-API/POD-CLAIMS" as a duplicate                |
        | a container naming no pod claim       | [{name: gpu, resourceClaimName: a}]                                                 | [{name: ctr, resources: {claims: [{name: nic}]}}]                               | (absent)                                                 | rejected at "spec.containers[0].resources.claims[0]" by rule "DRA-API/POD-CLAIMS"         |
        | an init container naming no pod claim | (absent)                                                                            | [{name: ctr}]                                                                   | [{name: setup, resources: {claims: [{name: gpu}]}}]      | rejected at "spec.initContainers[0].resources.claims[0]" by rule "DRA-API/POD-CLAIMS"     |
        | a container listing a claim twice     | [{name: gpu, resourceClaimName: a}]                                                 | [{name: ctr, resources: {claims: [{name: gpu}, {name: gpu}]}}]                  | (absent)                                                 | rejected at "spec.containers[0].resources.claims[1]" by rule "DRA-API/POD-CLAIMS" as a duplicate         |
        | a request that is no DNS label        | [{name: gpu, resourceClaimName: a}]                                                 | [{name: ctr, resources: {claims: [{name: gpu, request: GPU_0}]}}]               | (absent)                                                 | rejected at "spec.containers[0].resources.claims[0].request" by rule "DRA-API/POD-CLAIMS" |
