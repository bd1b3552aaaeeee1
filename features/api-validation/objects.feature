@api-validation
Feature: Every DRA object is well-formed (resource.k8s.io/v1 object schema and metadata)

  Rule: DRA-API/OBJECT-SCHEMA  Required fields, declared types, no unknown fields

    Scenario Outline: A device class with <case>
      When the user creates the DeviceClass:
        """yaml
        metadata: {name: gpu.example.com}
        spec:
          <field>
        """
      Then the request is <outcome>

      Examples:
        | case                        | field                                               | outcome                                                                |
        | a selector                  | selectors: [{cel: {expression: "true"}}]            | accepted                                                               |
        | a misspelt field            | selector: [{cel: {expression: "true"}}]             | rejected at "spec.selector" by rule "DRA-API/OBJECT-SCHEMA"            |
        | a selector without CEL      | selectors: [{}]                                     | rejected at "spec.selectors[0].cel" by rule "DRA-API/OBJECT-SCHEMA"    |
        | selectors given as a string | selectors: 'device.driver == "gpu.example.com"'     | rejected at "spec.selectors" by rule "DRA-API/OBJECT-SCHEMA"           |

    Scenario: Every unknown field of a device class is refused at once
      When the user creates the DeviceClass:
        """yaml
        metadata: {name: gpu.example.com}
        spec:
          selector: [{cel: {expression: "true"}}]
          confg: []
        """
      Then the request is rejected at "spec.selector" by rule "DRA-API/OBJECT-SCHEMA"
      And the request is rejected at "spec.confg" by rule "DRA-API/OBJECT-SCHEMA"

  Rule: DRA-API/OBJECT-METADATA  Names, namespaces, labels and finalizers have Kubernetes name syntax

    Scenario Outline: A claim named <name> with label <label>
      When the user creates the ResourceClaim "one-gpu" from the manifests with:
        | field           | value             |
        | metadata.name   | <name>            |
        | metadata.labels | {<label>: "true"} |
      Then the request is <outcome>

      Examples:
        | name          | label              | outcome                                                         |
        | trainer.gpu-0 | example.com/team   | accepted                                                        |
        | Trainer_GPU   | example.com/team   | rejected at "metadata.name" by rule "DRA-API/OBJECT-METADATA"   |
        | trainer       | example.com/a/team | rejected at "metadata.labels" by rule "DRA-API/OBJECT-METADATA" |
