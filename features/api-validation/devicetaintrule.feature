@profile:core
Feature: DeviceTaintRule objects are well-formed (resource.k8s.io/v1, v1beta2 from 1.36)

  Rule: DRA-API/DEVICE-TAINT-RULE  One valid taint, and a selector naming a driver, pool and device in their formats

    Scenario Outline: A DeviceTaintRule with <what>
      When the user creates the DeviceTaintRule "gpu-0-maintenance" from the manifests with:
        | field               | value      |
        | spec.deviceSelector | <selector> |
        | spec.taint          | <taint>    |
      Then the request is <outcome>

      Examples:
        | what                          | selector                                                 | taint                                                              | outcome                                                                               |
        | a driver and a device         | {driver: gpu.example.com, pool: worker-1, device: gpu-0} | {key: example.com/maintenance, effect: NoExecute}                  | accepted                                                                              |
        | an empty selector             | {}                                                       | {key: example.com/maintenance, value: planned, effect: NoSchedule} | accepted                                                                              |
        | the effect None               | {driver: gpu.example.com}                                | {key: example.com/note, effect: None}                              | accepted                                                                              |
        | no taint                      | {driver: gpu.example.com}                                | (absent)                                                           | rejected at "spec.taint.effect" by rule "DRA-API/DEVICE-TAINT-FORMAT"                 |
        | a taint without an effect     | (absent)                                                 | {key: example.com/maintenance}                                     | rejected at "spec.taint.effect" by rule "DRA-API/DEVICE-TAINT-FORMAT"                 |
        | an unknown effect             | (absent)                                                 | {key: example.com/maintenance, effect: PreferNoSchedule}           | rejected at "spec.taint.effect" by rule "DRA-API/DEVICE-TAINT-FORMAT"                 |
        | a driver that is no DNS name  | {driver: GPU_Driver}                                     | {key: example.com/maintenance, effect: NoSchedule}                 | rejected at "spec.deviceSelector.driver" by rule "DRA-API/DEVICE-TAINT-RULE"          |
        | a device that is no DNS label | {device: gpu.0}                                          | {key: example.com/maintenance, effect: NoSchedule}                 | rejected at "spec.deviceSelector.device" by rule "DRA-API/DEVICE-TAINT-RULE"          |
        | a 1.34-era class selector     | {deviceClassName: gpu.example.com}                       | {key: example.com/maintenance, effect: NoSchedule}                 | rejected at "spec.deviceSelector.deviceClassName" by rule "DRA-API/DEVICE-TAINT-RULE" |

  Rule: DRA-API/DEVICE-TAINT-TIME-ADDED  The API server stamps a taint written without timeAdded

    Scenario: An administrator's DeviceTaintRule without timeAdded is stored with one
      When the user creates the DeviceTaintRule "gpu-0-maintenance" from the manifests
      Then the request is accepted
      And the stored DeviceTaintRule "gpu-0-maintenance" has field "spec.taint.timeAdded"
