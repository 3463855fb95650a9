#!/usr/bin/env python3
"""gllmk-run must refuse every malformed GGUF file with one line naming the field.

It writes a valid tiny llama model, checks that gllmk-run runs it (so each
corruption below is what makes a variant fail), then runs one variant per
corruption and checks: exit status 2 (bad file) or 3 (valid GGUF that gllmk
cannot run), a message naming the field, no sanitizer report, no signal.

    test_bad_gguf.py --run build/tools/run/gllmk-run [--plugin cpu-generic]
                     [--wrapper "qemu-aarch64 -L /usr/aarch64-linux-gnu"]

--reader-only points --run at a program that only opens the file with the
GGUF reader (it takes the same command line, prints the error and exits 2):
cases that only gllmk-run can detect (a missing tensor, an unknown
architecture) are then expected to open cleanly (exit 0).
"""
import argparse
import copy
import os
import random
import shlex
import struct
import subprocess
import sys
import tempfile

# GGUF value types.
U8, I8, U16, I16, U32, I32, F32V, BOOL, STR, ARR, U64, I64, F64 = range(13)
SCALAR_FORMAT = {U8: '<B', I8: '<b', U16: '<H', I16: '<h', U32: '<I', I32: '<i',
                 F32V: '<f', BOOL: '<B', U64: '<Q', I64: '<q', F64: '<d'}
# ggml tensor types used here: (block elements, block bytes).
F32, Q8_0, IQ2_XXS, GGML_I32, MXFP4 = 0, 8, 16, 26, 39
BLOCK = {F32: (1, 4), Q8_0: (32, 34), IQ2_XXS: (256, 66), GGML_I32: (1, 4), MXFP4: (32, 17)}

SANITIZER_MARKS = ('AddressSanitizer', 'runtime error', 'LeakSanitizer')
TRUNCATION_WORDS = ('end of the file', 'empty', 'more than the file could hold')
ALIGN = 32


def enc_str(s):
    b = s.encode() if isinstance(s, str) else s
    return struct.pack('<Q', len(b)) + b


def enc_value(vtype, value):
    if vtype == STR:
        return enc_str(value)
    if vtype == ARR:
        elem_type, items = value
        return struct.pack('<IQ', elem_type, len(items)) + b''.join(enc_value(elem_type, v) for v in items)
    return struct.pack(SCALAR_FORMAT[vtype], value)


class Model:
    """A GGUF file as fields, so that each variant changes exactly one."""

    def __init__(self):
        self.magic = b'GGUF'
        self.version = struct.pack('<I', 3)
        self.n_tensors = None  # None: the real counts
        self.n_kv = None
        self.kvs = []          # [key, type, value] or {'raw': bytes}
        self.tensors = []      # {'name', 'ne', 'type', 'data', 'offset', 'n_dims'}

    def kv(self, key):
        return next(k for k in self.kvs if isinstance(k, list) and k[0] == key)

    def kv_index(self, key):
        return self.kvs.index(self.kv(key))

    def tensor(self, name):
        return next(t for t in self.tensors if t['name'] == name)

    def drop_kv(self, key):
        self.kvs.remove(self.kv(key))

    def drop_tensor(self, name):
        self.tensors.remove(self.tensor(name))


def kv_bytes(kv):
    if isinstance(kv, dict):
        return kv['raw']
    key, vtype, value = kv
    return enc_str(key) + struct.pack('<I', vtype) + enc_value(vtype, value)


def tensor_info_bytes(t, offset):
    ne = t['ne']
    n_dims = t.get('n_dims', len(ne))
    out = enc_str(t['name']) + struct.pack('<I', n_dims)
    out += b''.join(struct.pack('<q' if d < 0 else '<Q', d) for d in ne)
    return out + struct.pack('<IQ', t['type'], offset)


def pad(n):
    return (n + ALIGN - 1) // ALIGN * ALIGN


def build(m):
    """Returns the file's bytes, its section boundaries [(label, byte)] and
    each tensor's offset as laid out (before any override)."""
    marks = [('magic', 0)]
    out = bytearray(m.magic)
    marks.append(('version', len(out)))
    out += m.version
    marks.append(('tensor count', len(out)))
    out += struct.pack('<Q', len(m.tensors) if m.n_tensors is None else m.n_tensors)
    marks.append(('kv count', len(out)))
    out += struct.pack('<Q', len(m.kvs) if m.n_kv is None else m.n_kv)
    for i, kv in enumerate(m.kvs):
        marks.append(('kv %d' % i, len(out)))
        out += kv_bytes(kv)
    offsets, at = [], 0
    for t in m.tensors:
        offsets.append(at)
        at = pad(at + len(t['data']))
    for i, t in enumerate(m.tensors):
        marks.append(('tensor info %d' % i, len(out)))
        out += tensor_info_bytes(t, t.get('offset', offsets[i]))
    marks.append(('header end', len(out)))
    out += bytes(pad(len(out)) - len(out))
    data_start = len(out)
    for i, t in enumerate(m.tensors):
        marks.append(('tensor data %d' % i, data_start + offsets[i]))
        out += bytes(data_start + offsets[i] - len(out)) + t['data']
    out += bytes(pad(len(out)) - len(out))
    marks.append(('end', len(out)))
    return bytes(out), marks, {t['name']: at for t, at in zip(m.tensors, offsets)}


def f32_data(rng, n, value=None):
    vals = [value] * n if value is not None else [rng.uniform(-0.05, 0.05) for _ in range(n)]
    return struct.pack('<%df' % n, *vals)


def llama(n_embd=64, n_ff=128, n_head=2, n_head_kv=1, n_vocab=32, n_layer=1, attn_q_type=F32):
    rng = random.Random(1)
    head_dim = n_embd // n_head
    m = Model()
    tokens = ['<unk>', '<s>', '</s>'] + ['t%d' % i for i in range(3, n_vocab)]
    m.kvs = [
        ['general.architecture', STR, 'llama'],
        ['general.name', STR, 'bad-gguf test model'],
        ['general.alignment', U32, ALIGN],
        ['llama.block_count', U32, n_layer],
        ['llama.context_length', U32, 64],
        ['llama.embedding_length', U32, n_embd],
        ['llama.feed_forward_length', U32, n_ff],
        ['llama.attention.head_count', U32, n_head],
        ['llama.attention.head_count_kv', U32, n_head_kv],
        ['llama.attention.layer_norm_rms_epsilon', F32V, 1e-5],
        ['llama.rope.freq_base', F32V, 10000.0],
        ['tokenizer.ggml.model', STR, 'llama'],
        ['tokenizer.ggml.tokens', ARR, (STR, tokens)],
        ['tokenizer.ggml.scores', ARR, (F32V, [float(-i) for i in range(n_vocab)])],
        ['tokenizer.ggml.token_type', ARR, (I32, [1] * n_vocab)],
        ['tokenizer.ggml.bos_token_id', U32, 1],
        ['tokenizer.ggml.eos_token_id', U32, 2],
    ]

    def add(name, ne, norm=False, type_=F32):
        if type_ == F32:
            data = f32_data(rng, ne[0] * (ne[1] if len(ne) > 1 else 1), 1.0 if norm else None)
        else:
            blocks, size = BLOCK[type_]
            data = bytes(ne[0] // blocks * size * ne[1])
        m.tensors.append({'name': name, 'ne': ne, 'type': type_, 'data': data})

    add('token_embd.weight', [n_embd, n_vocab])
    for i in range(n_layer):
        b = 'blk.%d.' % i
        add(b + 'attn_norm.weight', [n_embd], norm=True)
        add(b + 'attn_q.weight', [n_embd, n_head * head_dim], type_=attn_q_type)
        add(b + 'attn_k.weight', [n_embd, n_head_kv * head_dim])
        add(b + 'attn_v.weight', [n_embd, n_head_kv * head_dim])
        add(b + 'attn_output.weight', [n_head * head_dim, n_embd])
        add(b + 'ffn_norm.weight', [n_embd], norm=True)
        add(b + 'ffn_gate.weight', [n_embd, n_ff])
        add(b + 'ffn_up.weight', [n_embd, n_ff])
        add(b + 'ffn_down.weight', [n_ff, n_embd])
    add('output_norm.weight', [n_embd], norm=True)
    add('output.weight', [n_embd, n_vocab])
    return m


class Case:
    def __init__(self, name, data, status=2, expect=(), expect_any=(), model_level=False):
        self.name, self.data, self.status = name, data, status
        self.expect, self.expect_any, self.model_level = list(expect), list(expect_any), model_level


def variant(good, change):
    m = copy.deepcopy(good)
    change(m)
    return build(m)[0]


def setter(obj, key, value):
    def change(m):
        obj(m)[key] = value
    return change


def truncation_cases(data, marks):
    cuts = {}
    for label, at in marks:
        if at < len(data):
            cuts.setdefault(at, 'truncated at %s (byte %d)' % (label, at))
    cuts.setdefault(2, 'truncated inside the magic (byte 2)')
    cuts.setdefault(len(data) - 1, 'truncated by its last byte')
    for k in range(1, 21):
        at = len(data) * k // 21 + k  # off the section boundaries
        cuts.setdefault(at, 'truncated at byte %d' % at)
    return [Case(name, data[:at], expect_any=TRUNCATION_WORDS) for at, name in sorted(cuts.items())]


def header_cases(good):
    def field(attr, value):
        return variant(good, lambda m: setattr(m, attr, value))
    cases = [
        Case('wrong magic', field('magic', b'GGUX'), expect=['magic']),
        Case('version 1', field('version', struct.pack('<I', 1)), expect=['version']),
        Case('version 4', field('version', struct.pack('<I', 4)), expect=['version']),
        Case('big-endian version', field('version', struct.pack('>I', 3)), expect=['big-endian']),
    ]
    for n, shown in ((1 << 62, '2^62'), ((1 << 64) - 1, '2^64-1')):
        cases.append(Case('tensor count %s' % shown, field('n_tensors', n), expect=['tensor count']))
        cases.append(Case('kv count %s' % shown, field('n_kv', n), expect=['kv count']))
    return cases


def raw_kv(good, key, raw):
    """Replaces kv `key` by raw bytes (its key string included)."""
    def change(m):
        m.kvs[m.kv_index(key)] = {'raw': raw}
    return variant(good, change)


def kv_cases(good):
    tokens = good.kv('tokenizer.ggml.tokens')[2][1]
    token_bytes = b''.join(enc_str(t) for t in tokens)
    scores = struct.pack('<%df' % len(tokens), *[0.0] * len(tokens))
    name = enc_str('general.name')

    def array(key, elem_type, count, body):
        return raw_kv(good, key, enc_str(key) + struct.pack('<IIQ', ARR, elem_type, count) + body)

    def dup_key(m):
        m.kvs.append(['general.name', STR, 'again'])
    return [
        Case('key length 2^64-1', raw_kv(good, 'general.name', struct.pack('<Q', (1 << 64) - 1) + b'general.name'),
             expect=['key length']),
        Case('string length 2^64-1', raw_kv(good, 'general.name', name + struct.pack('<IQ', STR, (1 << 64) - 1) + b'x'),
             expect=['general.name', 'length']),
        Case('string array count 2^62', array('tokenizer.ggml.tokens', STR, 1 << 62, token_bytes),
             expect=['tokenizer.ggml.tokens']),
        Case('string array count 2^64-1', array('tokenizer.ggml.tokens', STR, (1 << 64) - 1, token_bytes),
             expect=['tokenizer.ggml.tokens']),
        Case('float array count 2^62', array('tokenizer.ggml.scores', F32V, 1 << 62, scores),
             expect=['tokenizer.ggml.scores']),
        Case('array string length huge',
             array('tokenizer.ggml.tokens', STR, 2, enc_str('a') + struct.pack('<Q', 1 << 63)),
             expect=['tokenizer.ggml.tokens', 'length']),
        Case('array of unknown element type', array('tokenizer.ggml.scores', 13, len(tokens), scores),
             expect=['tokenizer.ggml.scores', 'type']),
        Case('array of arrays', array('tokenizer.ggml.scores', ARR, 1, struct.pack('<IQ', F32V, 0)),
             expect=['tokenizer.ggml.scores', 'array']),
        Case('unknown kv type', raw_kv(good, 'general.name', name + struct.pack('<I', 13) + b'\0' * 8),
             expect=['general.name', 'type']),
        Case('duplicate key', variant(good, dup_key), expect=['general.name', 'duplicate']),
        Case('alignment 0', variant(good, lambda m: m.kv('general.alignment').__setitem__(2, 0)),
             expect=['alignment']),
        Case('alignment 3', variant(good, lambda m: m.kv('general.alignment').__setitem__(2, 3)),
             expect=['alignment']),
        Case('alignment of type int32', variant(good, lambda m: m.kv('general.alignment').__setitem__(1, I32)),
             expect=['alignment']),
    ]


def tensor_cases(good, offsets):
    q = 'blk.0.attn_q.weight'
    up = 'blk.0.ffn_up.weight'

    def tensor(name):
        return lambda m: m.tensor(name)

    def case(title, name, key, value, expect=()):
        return Case(title, variant(good, setter(tensor(name), key, value)), expect=[name] + list(expect))

    def rename(m):
        m.tensor('blk.0.ffn_gate.weight')['name'] = up
    return [
        case('n_dims 0', q, 'n_dims', 0, ['n_dims']),
        case('n_dims 5', q, 'n_dims', 5, ['n_dims']),
        case('ne 0', q, 'ne', [64, 0]),
        case('ne negative', q, 'ne', [64, -1]),
        case('ne product overflows int64', q, 'ne', [1 << 31, 1 << 31, 1 << 31]),
        case('byte size overflows uint64', q, 'ne', [1 << 61, 2]),
        case('unknown tensor type 200', q, 'type', 200, ['type']),
        case('removed tensor type 4', q, 'type', 4, ['type']),
        case('removed tensor type 36', q, 'type', 36, ['type']),
        # a ggml type gllmk has no dtype for: the reader cannot know its byte size
        case('tensor type 24 (ggml i8)', q, 'type', 24, ['type 24', 'not a gllmk dtype']),
        case('tensor type 40 (past mxfp4)', q, 'type', 40, ['type 40', 'not a gllmk dtype']),
        Case('q8_0 row of 33 elements',
             variant(good, lambda m: m.tensor('blk.0.attn_norm.weight').update(type=Q8_0, ne=[33])),
             expect=['blk.0.attn_norm.weight']),
        case('offset misaligned', up, 'offset', offsets[up] + 4, ['align']),
        case('offset past the end', up, 'offset', 1 << 40, ['end of the file']),
        case('offset 2^64-32', up, 'offset', (1 << 64) - 32, ['end of the file']),
        case('tensors overlap', up, 'offset', offsets['blk.0.ffn_gate.weight'], ['overlap']),
        Case('duplicate tensor name', variant(good, rename), expect=[up, 'duplicate']),
    ]


def model_cases(good):
    q = 'blk.0.attn_q.weight'

    def wrong_rows(m):
        m.tensor(q).update(ne=[64, 32], data=bytes(64 * 32 * 4))
    return [
        Case('missing tensor', variant(good, lambda m: m.drop_tensor('blk.0.ffn_up.weight')),
             expect=['blk.0.ffn_up.weight'], model_level=True),
        Case('attn_q with the wrong row count', variant(good, wrong_rows), expect=[q], model_level=True),
        Case('missing llama.block_count', variant(good, lambda m: m.drop_kv('llama.block_count')),
             expect=['llama.block_count'], model_level=True),
        Case('architecture mamba', variant(good, lambda m: m.kv('general.architecture').__setitem__(2, 'mamba')),
             status=3, expect=['mamba'], model_level=True),
        # ABI 1.1's block dtypes run (zero blocks here); i32 is a dtype but no weight
        Case('tensor type iq2_xxs runs', build(llama(n_embd=256, n_ff=512, attn_q_type=IQ2_XXS))[0], status=0),
        Case('tensor type mxfp4 runs', build(llama(attn_q_type=MXFP4))[0], status=0),
        Case('tensor type i32', build(llama(attn_q_type=GGML_I32))[0], status=3, expect=['i32', 'weight'],
             model_level=True),
        # rope: Llama 3.1's rope_freqs and YaRN run (rope_ext); other scalings are named
        Case('rope_freqs runs', variant(good, lambda m: add_tensor(m, 'rope_freqs.weight', [16])), status=0),
        Case('rope_freqs of the wrong length', variant(good, lambda m: add_tensor(m, 'rope_freqs.weight', [32])),
             expect=['rope_freqs.weight'], model_level=True),
        Case('yarn runs', variant(good, lambda m: m.kvs.extend(yarn_kvs(4.0))), status=0),
        Case('yarn factor 0', variant(good, lambda m: m.kvs.extend(yarn_kvs(0.0))),
             expect=['rope.scaling.factor'], model_level=True),
        Case('rope scaling longrope', variant(good, lambda m: m.kvs.append(['llama.rope.scaling.type', STR, 'longrope'])),
             status=3, expect=['longrope'], model_level=True),
        # a mixture of experts (expert_count > 0) needs the router and expert stacks
        Case('expert_count 4 on dense tensors', variant(good, experts(4, 2)),
             expect=['blk.0.ffn_gate_inp.weight'], model_level=True),
        Case('expert_used_count > expert_count', variant(good, experts(4, 5)),
             expect=['expert_used_count'], model_level=True),
        Case('expert_count without expert_used_count', variant(good, experts(4, None)),
             expect=['llama.expert_used_count'], model_level=True),
    ]


def add_tensor(m, name, ne):
    m.tensors.append({'name': name, 'ne': ne, 'type': F32, 'data': f32_data(random.Random(2), ne[0], 1.0)})


def yarn_kvs(factor):
    return [['llama.rope.scaling.type', STR, 'yarn'], ['llama.rope.scaling.factor', F32V, factor],
            ['llama.rope.scaling.original_context_length', U32, 32]]


def gemma2(good, softcap=50.0, final=30.0, window=4):
    """The llama model as a valid gemma2 one: keys renamed, the post-norms added,
    output.weight dropped (tied), the soft-caps and window in the metadata."""
    m = copy.deepcopy(good)
    for kv in m.kvs:
        if isinstance(kv, list) and kv[0].startswith('llama.'):
            kv[0] = 'gemma2.' + kv[0][len('llama.'):]
    m.kv('general.architecture')[2] = 'gemma2'
    m.kvs += [['gemma2.attention.sliding_window', U32, window],
              ['gemma2.attn_logit_softcapping', F32V, softcap],
              ['gemma2.final_logit_softcapping', F32V, final]]
    n_embd = m.kv('gemma2.embedding_length')[2]
    for i in range(m.kv('gemma2.block_count')[2]):
        add_tensor(m, 'blk.%d.post_attention_norm.weight' % i, [n_embd])
        add_tensor(m, 'blk.%d.post_ffw_norm.weight' % i, [n_embd])
    m.drop_tensor('output.weight')
    return m


def gemma2_cases(good):
    """Gemma 2's own metadata and tensors."""
    g = gemma2(good)
    return [
        Case('gemma2 runs', build(g)[0], status=0),
        Case('gemma2 without post_ffw_norm', variant(g, lambda m: m.drop_tensor('blk.0.post_ffw_norm.weight')),
             expect=['blk.0.post_ffw_norm.weight'], model_level=True),
        Case('gemma2 attn_logit_softcapping 0', build(gemma2(good, softcap=0.0))[0],
             expect=['attn_logit_softcapping'], model_level=True),
        Case('gemma2 final_logit_softcapping -30', build(gemma2(good, final=-30.0))[0],
             expect=['final_logit_softcapping'], model_level=True),
        Case('gemma2 final_logit_softcapping inf', build(gemma2(good, final=float('inf')))[0],
             expect=['final_logit_softcapping'], model_level=True),
        Case('gemma2 sliding_window 0', build(gemma2(good, window=0))[0],
             expect=['gemma2.attention.sliding_window'], model_level=True),
    ]


def gemma3(good, final=None, window=4):
    """The gemma2 model as a valid gemma3 one: no score cap, q/k norms [head_dim],
    final_logit_softcapping only when given."""
    m = gemma2(good, window=window)
    m.drop_kv('gemma2.attn_logit_softcapping')
    m.drop_kv('gemma2.final_logit_softcapping')
    for kv in m.kvs:
        if isinstance(kv, list) and kv[0].startswith('gemma2.'):
            kv[0] = 'gemma3.' + kv[0][len('gemma2.'):]
    m.kv('general.architecture')[2] = 'gemma3'
    if final is not None:
        m.kvs.append(['gemma3.final_logit_softcapping', F32V, final])
    head_dim = m.kv('gemma3.embedding_length')[2] // m.kv('gemma3.attention.head_count')[2]
    for i in range(m.kv('gemma3.block_count')[2]):
        add_tensor(m, 'blk.%d.attn_q_norm.weight' % i, [head_dim])
        add_tensor(m, 'blk.%d.attn_k_norm.weight' % i, [head_dim])
    return m


def gemma3_cases(good):
    g = gemma3(good)
    return [
        Case('gemma3 runs', build(g)[0], status=0),
        Case('gemma3 without a window runs', build(gemma3(good, window=0))[0], status=0),
        Case('gemma3 with a final cap runs', build(gemma3(good, final=30.0))[0], status=0),
        Case('gemma3 without attn_k_norm', variant(g, lambda m: m.drop_tensor('blk.0.attn_k_norm.weight')),
             expect=['blk.0.attn_k_norm.weight'], model_level=True),
        Case('gemma3 final_logit_softcapping -1', build(gemma3(good, final=-1.0))[0],
             expect=['final_logit_softcapping'], model_level=True),
        Case('gemma3 final_logit_softcapping nan', build(gemma3(good, final=float('nan')))[0],
             expect=['final_logit_softcapping'], model_level=True),
        Case('gemma3 sliding_window 2^31', build(gemma3(good, window=1 << 31))[0],
             expect=['gemma3.attention.sliding_window'], model_level=True),
    ]


def phi3(good, longrope=True, attn_factor=1.2):
    """The llama model as a valid phi3 one: q/k/v and gate/up fused, LongRoPE's
    factors [head_dim/2] and rope.scaling.attn_factor."""
    m = copy.deepcopy(good)
    for kv in m.kvs:
        if isinstance(kv, list) and kv[0].startswith('llama.'):
            kv[0] = 'phi3.' + kv[0][len('llama.'):]
    m.kv('general.architecture')[2] = 'phi3'
    n_embd, n_ff = m.kv('phi3.embedding_length')[2], m.kv('phi3.feed_forward_length')[2]
    head_dim = n_embd // m.kv('phi3.attention.head_count')[2]
    n_kv = m.kv('phi3.attention.head_count_kv')[2] * head_dim
    m.kvs += [['phi3.rope.scaling.original_context_length', U32, 16],
              ['phi3.rope.scaling.attn_factor', F32V, attn_factor]]
    for i in range(m.kv('phi3.block_count')[2]):
        b = 'blk.%d.' % i
        for name in ('attn_q', 'attn_k', 'attn_v', 'ffn_gate', 'ffn_up'):
            m.drop_tensor(b + name + '.weight')
        m.tensors.append({'name': b + 'attn_qkv.weight', 'ne': [n_embd, n_embd + 2 * n_kv], 'type': F32,
                          'data': f32_data(random.Random(3), n_embd * (n_embd + 2 * n_kv))})
        m.tensors.append({'name': b + 'ffn_up.weight', 'ne': [n_embd, 2 * n_ff], 'type': F32,
                          'data': f32_data(random.Random(4), n_embd * 2 * n_ff)})
    if longrope:
        add_tensor(m, 'rope_factors_long.weight', [head_dim // 2])
        add_tensor(m, 'rope_factors_short.weight', [head_dim // 2])
    return m


def phi3_cases(good):
    p = phi3(good)

    def resize(name, ne):
        return lambda m: m.tensor(name).update(ne=ne, data=f32_data(random.Random(5), ne[0] * (ne[1] if len(ne) > 1 else 1)))
    return [
        Case('phi3 runs', build(p)[0], status=0),
        Case('phi3 without LongRoPE factors runs', build(phi3(good, longrope=False))[0], status=0),
        Case('phi3 without attn_qkv', variant(p, lambda m: m.drop_tensor('blk.0.attn_qkv.weight')),
             expect=['blk.0.attn_qkv.weight'], model_level=True),
        Case('phi3 ffn_up not 2 x ffn', variant(p, resize('blk.0.ffn_up.weight', [64, 128])),
             expect=['blk.0.ffn_up.weight'], model_level=True),
        Case('phi3 rope_factors_long of the wrong length', variant(p, resize('rope_factors_long.weight', [32])),
             expect=['rope_factors_long.weight'], model_level=True),
        Case('phi3 rope.scaling.attn_factor 0', build(phi3(good, attn_factor=0.0))[0],
             expect=['rope.scaling.attn_factor'], model_level=True),
        Case('phi3 rope.scaling.attn_factor nan', build(phi3(good, attn_factor=float('nan')))[0],
             expect=['rope.scaling.attn_factor'], model_level=True),
    ]


def gptoss(good, n_expert=4, n_ff_exp=32, window=4):
    """The llama model as a valid gpt-oss one: keys renamed, the experts' count,
    width and the window in the metadata; per layer q/k/v/output biases, sinks,
    post_attention_norm in place of ffn_norm, a biased router and biased expert
    stacks (MXFP4, as gpt-oss ships them) in place of ffn_gate/up/down."""
    m = copy.deepcopy(good)
    for kv in m.kvs:
        if isinstance(kv, list) and kv[0].startswith('llama.'):
            kv[0] = 'gpt-oss.' + kv[0][len('llama.'):]
    m.kv('general.architecture')[2] = 'gpt-oss'
    m.kvs += [['gpt-oss.expert_count', U32, n_expert], ['gpt-oss.expert_used_count', U32, 2],
              ['gpt-oss.expert_feed_forward_length', U32, n_ff_exp],
              ['gpt-oss.attention.sliding_window', U32, window]]
    n_embd, n_head = m.kv('gpt-oss.embedding_length')[2], m.kv('gpt-oss.attention.head_count')[2]
    n_kv = m.kv('gpt-oss.attention.head_count_kv')[2] * (n_embd // n_head)
    rng = random.Random(6)

    def add(name, ne, type_=F32):
        n = 1
        for d in ne:
            n *= d
        data = f32_data(rng, n) if type_ == F32 else bytes(n // BLOCK[type_][0] * BLOCK[type_][1])
        m.tensors.append({'name': name, 'ne': ne, 'type': type_, 'data': data})
    for i in range(m.kv('gpt-oss.block_count')[2]):
        b = 'blk.%d.' % i
        for name in ('ffn_norm', 'ffn_gate', 'ffn_up', 'ffn_down'):
            m.drop_tensor(b + name + '.weight')
        add_tensor(m, b + 'post_attention_norm.weight', [n_embd])
        for name, n in (('attn_q.bias', n_embd), ('attn_k.bias', n_kv), ('attn_v.bias', n_kv),
                        ('attn_output.bias', n_embd), ('attn_sinks.weight', n_head), ('ffn_gate_inp.bias', n_expert)):
            add(b + name, [n])
        add(b + 'ffn_gate_inp.weight', [n_embd, n_expert])
        add(b + 'ffn_gate_exps.weight', [n_embd, n_ff_exp, n_expert], MXFP4)
        add(b + 'ffn_up_exps.weight', [n_embd, n_ff_exp, n_expert], MXFP4)
        add(b + 'ffn_down_exps.weight', [n_ff_exp, n_embd, n_expert], MXFP4)
        add(b + 'ffn_gate_exps.bias', [n_ff_exp, n_expert])
        add(b + 'ffn_up_exps.bias', [n_ff_exp, n_expert])
        add(b + 'ffn_down_exps.bias', [n_embd, n_expert])
    return m


def gptoss_cases(good):
    g = gptoss(good)

    def f16_bias(m):  # the same bytes read as twice as many f16 values: a valid f16 tensor
        t = m.tensor('blk.0.ffn_up_exps.bias')
        t.update(type=1, data=t['data'][:len(t['data']) // 2])
    return [
        Case('gpt-oss runs', build(g)[0], status=0),
        Case('gpt-oss without attn_sinks', variant(g, lambda m: m.drop_tensor('blk.0.attn_sinks.weight')),
             expect=['blk.0.attn_sinks.weight'], model_level=True),
        Case('gpt-oss without attn_output.bias', variant(g, lambda m: m.drop_tensor('blk.0.attn_output.bias')),
             expect=['blk.0.attn_output.bias'], model_level=True),
        Case('gpt-oss without ffn_down_exps.bias', variant(g, lambda m: m.drop_tensor('blk.0.ffn_down_exps.bias')),
             expect=['blk.0.ffn_down_exps.bias'], model_level=True),
        Case('gpt-oss without post_attention_norm',
             variant(g, lambda m: m.drop_tensor('blk.0.post_attention_norm.weight')),
             expect=['blk.0.post_attention_norm.weight'], model_level=True),
        Case('gpt-oss ffn_up_exps.bias in f16', variant(g, f16_bias), status=3,
             expect=['blk.0.ffn_up_exps.bias', 'f32'], model_level=True),
        Case('gpt-oss without sliding_window', variant(g, lambda m: m.drop_kv('gpt-oss.attention.sliding_window')),
             expect=['gpt-oss.attention.sliding_window'], model_level=True),
        Case('gpt-oss without expert_feed_forward_length',
             variant(g, lambda m: m.drop_kv('gpt-oss.expert_feed_forward_length')),
             expect=['gpt-oss.expert_feed_forward_length'], model_level=True),
    ]


def experts(count, used):
    """Adds llama.expert_count (and expert_used_count unless None) to the metadata."""
    def add(m):
        m.kvs.append(['llama.expert_count', U32, count])
        if used is not None:
            m.kvs.append(['llama.expert_used_count', U32, used])
    return add


def all_cases(good):
    data, marks, offsets = build(good)
    return ([Case('valid model runs', data, status=0)] + truncation_cases(data, marks) + header_cases(good)
            + kv_cases(good) + tensor_cases(good, offsets) + model_cases(good) + gemma2_cases(good)
            + gemma3_cases(good) + phi3_cases(good) + gptoss_cases(good))


def check(case, proc, reader_only):
    """Returns '' or why the case failed."""
    want = 0 if reader_only and case.model_level else case.status
    err = proc.stderr.decode(errors='replace')
    if proc.returncode < 0 or proc.returncode >= 128:
        return 'killed by a signal (status %d)' % proc.returncode
    if any(mark in line for line in err.splitlines() for mark in SANITIZER_MARKS):
        return 'sanitizer report'
    if proc.returncode != want:
        return 'expected exit status %d' % want
    if want == 0:
        return ''
    if not err.strip():
        return 'empty stderr'
    low = err.lower()
    missing = [s for s in case.expect if s.lower() not in low]
    if missing:
        return 'stderr lacks %s' % ', '.join(repr(s) for s in missing)
    if case.expect_any and not any(s.lower() in low for s in case.expect_any):
        return 'stderr has none of %s' % ', '.join(repr(s) for s in case.expect_any)
    return ''


def run_case(case, args, tmp, index):
    path = os.path.join(tmp, 'case%03d.gguf' % index)
    with open(path, 'wb') as f:
        f.write(case.data)
    cmd = shlex.split(args.wrapper or '') + [args.run, '-m', path, '-n', '2', '--plugin', args.plugin, '--quiet']
    try:
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=args.timeout)
    except subprocess.TimeoutExpired:
        return 'timed out after %d s' % args.timeout, None, ''
    finally:
        os.unlink(path)
    return check(case, proc, args.reader_only), proc.returncode, proc.stderr.decode(errors='replace')


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--run', required=True, help='the gllmk-run binary')
    ap.add_argument('--plugin', default='cpu-generic')
    ap.add_argument('--wrapper', default='', help='a command to run it under (qemu-user)')
    ap.add_argument('--timeout', type=int, default=120)
    ap.add_argument('--reader-only', action='store_true', help=argparse.SUPPRESS)
    args = ap.parse_args()

    passed = failed = 0
    with tempfile.TemporaryDirectory(prefix='bad-gguf-') as tmp:
        for i, case in enumerate(all_cases(llama())):
            why, status, err = run_case(case, args, tmp, i)
            if why:
                failed += 1
                print('FAIL %s: %s (exit status %s)' % (case.name, why, status))
                for line in err.splitlines()[:20]:
                    print('     | ' + line)
            else:
                passed += 1
                print('ok   %s' % case.name)
    print('bad-gguf: %d passed, %d failed' % (passed, failed))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
