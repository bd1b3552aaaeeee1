@profile:core
Feature: A pod's resource claims are well-formed (core/v1 Pod, the parts DRA relies on)

  Rule: DRA-API/POD-CLAIMS  Each pod claim names one source, and each container claim names a pod claim

    Scenario Outline: A pod with <what>
      When the user creates the Pod:
        """yaml
        {metadata: {name: trainer}, spec: <spec>}
        """
      Then the request is <outcome>

      Examples:
        | what                                   | spec                                                                                                                                                                       | outcome                                                                           |
        | a claim and a template claim           | {resourceClaims: [{name: gpu, resourceClaimName: shared-gpu}, {name: nic, resourceClaimTemplateName: one-nic}], containers: [{name: ctr, resources: {claims: [{name: gpu}, {name: nic}]}}]} | accepted                                              |
        | one claim for two requests             | {resourceClaims: [{name: gpu, resourceClaimName: two-gpus}], containers: [{name: ctr, resources: {claims: [{name: gpu, request: first}, {name: gpu, request: second}]}}]} | accepted                                                                          |
        | an entry naming both sources           | {resourceClaims: [{name: gpu, resourceClaimName: shared-gpu, resourceClaimTemplateName: one-gpu}], containers: [{name: ctr}]}                                           | rejected at "spec.resourceClaims[0]" by rule "DRA-API/POD-CLAIMS"                 |
        | an entry naming no source              | {resourceClaims: [{name: gpu}], containers: [{name: ctr}]}                                                                                                                 | rejected at "spec.resourceClaims[0]" by rule "DRA-API/POD-CLAIMS"                 |
        | the 1.30 source wrapper                | {resourceClaims: [{name: gpu, source: {resourceClaimTemplateName: one-gpu}}], containers: [{name: ctr}]}                                                                    | rejected at "spec.resourceClaims[0]" by rule "DRA-API/POD-CLAIMS"                 |
        | two entries of one name                | {resourceClaims: [{name: gpu, resourceClaimName: a}, {name: gpu, resourceClaimName: b}], containers: [{name: ctr}]}                                                        | rejected at "spec.resourceClaims[1].name" by rule "DRA-API/POD-CLAIMS"            |
        | a container naming no pod claim        | {resourceClaims: [{name: gpu, resourceClaimName: a}], containers: [{name: ctr, resources: {claims: [{name: nic}]}}]}                                                       | rejected at "spec.containers[0].resources.claims[0]" by rule "DRA-API/POD-CLAIMS" |
        | an init container naming no pod claim  | {initContainers: [{name: setup, resources: {claims: [{name: gpu}]}}], containers: [{name: ctr}]}                                                                          | rejected at "spec.initContainers[0].resources.claims[0]" by rule "DRA-API/POD-CLAIMS" |
        | a container listing a claim twice      | {resourceClaims: [{name: gpu, resourceClaimName: a}], containers: [{name: ctr, resources: {claims: [{name: gpu}, {name: gpu}]}}]}                                         | rejected at "spec.containers[0].resources.claims[1]" by rule "DRA-API/POD-CLAIMS" |
        | a request that is no DNS label         | {resourceClaims: [{name: gpu, resourceClaimName: a}], containers: [{name: ctr, resources: {claims: [{name: gpu, request: GPU_0}]}}]}                                      | rejected at "spec.containers[0].resources.claims[0].request" by rule "DRA-API/POD-CLAIMS" |
