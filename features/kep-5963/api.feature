@kep-5963
Feature: compatibilityGroups on consumesCounters entries, as the API server stores and validates them (KEP-5963 Design Details / API)

  Bounds the harness assumes (docs/decisions.md D-5963-3, upstream 1.37): at most 2 groups per
  consumesCounters entry, each a DNS label (at most 63 characters), no group twice.

  Background:
    Given a cluster with feature gates "DRADeviceCompatibilityGroups" on

  Rule: KEP-5963/SLICE-FIELD  A driver declares groups per consumesCounters entry and the API server keeps them

    Scenario: A device declares different groups for its two counter sets and reads them back
      When the ResourceSlice is created:
        """yaml
        metadata: {name: node-1-devices}
        spec:
          driver: gpu.example.com
          pool: {name: node-1, generation: 1, resourceSliceCount: 2}
          nodeName: node-1
          devices:
          - name: span
            consumesCounters:
            - {counterSet: gpu-0, compatibilityGroups: [mig, mig-linked], counters: {multiprocessors: {value: "10"}}}
            - {counterSet: gpu-1, compatibilityGroups: [vgpu], counters: {multiprocessors: {value: "10"}}}
        """
      Then device "span" of ResourceSlice "node-1-devices" declares compatibility groups:
        """yaml
        gpu-0: [mig, mig-linked]
        gpu-1: [vgpu]
        """

    # An API server with DRADeviceCompatibilityGroups off drops the groups on create (D-5963-4); one with
    # DRAPartitionableDevices off (as 1.35 at its defaults, which knows no groups either) drops the
    # consumesCounters entries that carry them.
    Scenario Outline: kube-apiserver <release> with <gates>: the groups of a new slice are not stored
      Given kube-apiserver version "<release>" with feature gates "<gates>"
      When the ResourceSlice is created:
        """yaml
        metadata: {name: node-1-devices}
        spec:
          driver: gpu.example.com
          pool: {name: node-1, generation: 1, resourceSliceCount: 2}
          nodeName: node-1
          devices:
          - name: span
            consumesCounters:
            - {counterSet: gpu-0, compatibilityGroups: [mig, mig-linked], counters: {multiprocessors: {value: "10"}}}
            - {counterSet: gpu-1, compatibilityGroups: [vgpu], counters: {multiprocessors: {value: "10"}}}
        """
      Then ResourceSlice "node-1-devices" declares no compatibility groups

      Examples:
        | release | gates                            |
        | current | DRADeviceCompatibilityGroups=off |
        | current | DRAPartitionableDevices=off      |
        | 1.35    | defaults                         |

  Rule: KEP-5963/GROUP-LIMITS  At most 2 groups per entry, each a DNS label, none twice

    @shape:groups:max @shape:groups:over-max @shape:groups:duplicate
    Scenario Outline: A consumesCounters entry with groups <groups> is <verdict> (kube-apiserver <kube-apiserver>)
      Given kube-apiserver is "<kube-apiserver>" (DRADeviceCompatibilityGroups)
      When the user creates the ResourceSlice:
        """yaml
        metadata: {name: node-1-devices}
        spec:
          driver: gpu.example.com
          pool: {name: node-1, generation: 1, resourceSliceCount: 2}
          nodeName: node-1
          devices:
          - name: device-0
            consumesCounters:
            - counterSet: gpu-0
              compatibilityGroups: <groups>
              counters:
                multiprocessors: {value: "10"}
        """
      Then the request <outcome>

      Examples: within the bounds
        | kube-apiserver | groups                                                            | verdict  | outcome     |
        | new, gate on   | [mig]                                                             | accepted | is accepted |
        | new, gate on   | [mig, mig-linked]                                                 | accepted | is accepted |
        | new, gate on   | [a23456789-123456789-123456789-123456789-123456789-123456789-123] | accepted | is accepted |
        | new, gate on   | []                                                                | accepted | is accepted |

      Examples: beyond the bounds
        | kube-apiserver | groups                                                             | verdict | outcome                                                                                                                           |
        | new, gate on   | [a, b, c]                                                          | refused | is rejected at "spec.devices[0].consumesCounters[0].compatibilityGroups" by rule "DRA-API/COMPATIBILITY-GROUPS"                   |
        | new, gate on   | [a23456789-123456789-123456789-123456789-123456789-123456789-1234] | refused | is rejected at "spec.devices[0].consumesCounters[0].compatibilityGroups[0]" by rule "DRA-API/COMPATIBILITY-GROUPS"                |
        | new, gate on   | [mig, mig]                                                         | refused | is rejected at "spec.devices[0].consumesCounters[0].compatibilityGroups[1]" by rule "DRA-API/COMPATIBILITY-GROUPS" as a duplicate |
        | new, gate on   | [MIG]                                                              | refused | is rejected at "spec.devices[0].consumesCounters[0].compatibilityGroups[0]" by rule "DRA-API/COMPATIBILITY-GROUPS"                |
        | new, gate on   | [-mig]                                                             | refused | is rejected at "spec.devices[0].consumesCounters[0].compatibilityGroups[0]" by rule "DRA-API/COMPATIBILITY-GROUPS"                |
        | new, gate on   | [mig_1]                                                            | refused | is rejected at "spec.devices[0].consumesCounters[0].compatibilityGroups[0]" by rule "DRA-API/COMPATIBILITY-GROUPS"                |

      # An API server with the gate off drops the field before validating it (D-5963-4): groups beyond the
      # bounds are not refused but gone.
      Examples: beyond the bounds, with the gate off in kube-apiserver
        | kube-apiserver | groups     | verdict              | outcome     |
        | new, gate off  | [a, b, c]  | accepted and dropped | is accepted |
        | new, gate off  | [mig, mig] | accepted and dropped | is accepted |
        | new, gate off  | [MIG]      | accepted and dropped | is accepted |
