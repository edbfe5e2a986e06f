"""Reads and writes the direct counter of switch.p4's `acl` default entry on a running
`pisa run --p4runtime ADDR` with p4runtime-shell (PyPI): as `counter_data` of the default
TableEntry and through a DirectCounterEntry naming the default entry. Prints one JSON object
with what it read.

usage: default_counter.py GRPC_ADDR
"""
import json
import sys

import p4runtime_sh.shell as sh

sh.setup(device_id=1, grpc_addr=sys.argv[1], election_id=(0, 1))
TABLE = "SwitchIngress.acl"


def default_entry_counts():
    te = sh.TableEntry(TABLE)(is_default=True)
    te.counter_data  # ask for the counter data
    return [[e.msg().counter_data.packet_count, e.msg().counter_data.byte_count,
             e.msg().is_default_action] for e in te.read()]


def direct_entry_counts():
    dc = sh.DirectCounterEntry("SwitchIngress.acl_counter")
    dc.table_entry = sh.TableEntry(TABLE)(is_default=True)
    return [[c.msg().data.packet_count, c.msg().data.byte_count,
             c.msg().table_entry.is_default_action] for c in dc.read()]


out = {"before": default_entry_counts()}
te = sh.TableEntry(TABLE)(action="SwitchIngress.acl_permit", is_default=True)
te.counter_data.packet_count = 7
te.counter_data.byte_count = 700
te.modify()
out["after_table_entry_write"] = default_entry_counts()
dc = sh.DirectCounterEntry("SwitchIngress.acl_counter")
dc.table_entry = sh.TableEntry(TABLE)(is_default=True)
dc.packet_count = 3
dc.byte_count = 300
dc.modify()
out["after_direct_counter_write"] = direct_entry_counts()
out["default_entry"] = default_entry_counts()
sh.teardown()
print(json.dumps(out))
